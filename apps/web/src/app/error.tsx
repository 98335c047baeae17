"use client";

/** Shown when a page fails on the server (e.g. the database is unreachable). */
export default function PageError({ error, retry }: { error: unknown; retry: () => void }) {
  const digest =
    typeof error === "object" && error !== null && "digest" in error ? String(error.digest) : null;
  return (
    <main className="auth-page">
      <section className="card auth-card" role="alert">
        <p className="brand">Thaw</p>
        <h1>Something went wrong</h1>
        <p className="muted">
          The dashboard could not be loaded{digest ? ` (error ${digest})` : ""}. The details are in
          the server log.
        </p>
        <button type="button" className="button primary" onClick={() => retry()}>
          Try again
        </button>
      </section>
    </main>
  );
}
