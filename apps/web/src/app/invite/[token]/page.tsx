import { describeInvitation, isAppError } from "@thaw/core";
import type { Metadata } from "next";
import { headers } from "next/headers";
import { getSessionUser } from "../../../server/auth.ts";
import { getDb } from "../../../server/db.ts";
import { AcceptInvitationForm } from "../accept-form.tsx";

export const metadata: Metadata = { title: "Invitation · Thaw", referrer: "no-referrer" };

/** An invitation link: what it offers, and the form that accepts it. */
export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  let invitation;
  try {
    invitation = await describeInvitation({ token, db: getDb() });
  } catch (error) {
    if (!isAppError(error)) throw error;
    return (
      <main className="auth-page">
        <section className="card auth-card">
          <p className="brand">Thaw</p>
          <h1>Invitation</h1>
          <p className="form-error" role="alert" data-testid="invitation-error">
            {error.message}
          </p>
        </section>
      </main>
    );
  }
  const user = await getSessionUser(await headers());
  return (
    <main className="auth-page">
      <section className="card auth-card" aria-labelledby="invitation-title">
        <p className="brand">Thaw</p>
        <h1 id="invitation-title">Join {invitation.orgName}</h1>
        <p className="muted" data-testid="invitation-summary">
          {invitation.email} is invited as <strong>{invitation.role}</strong>.
        </p>
        <AcceptInvitationForm
          token={token}
          newAccount={!invitation.accountExists}
          signedInAs={user?.email ?? null}
          invitedEmail={invitation.email}
        />
      </section>
    </main>
  );
}
