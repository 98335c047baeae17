import { ColdStartDetail } from "../../../components/cold-start-detail.tsx";
import { DashboardShell } from "../../../components/dashboard-shell.tsx";
import { LiveColdStarts } from "../../../components/live-cold-starts.tsx";

export const metadata = { title: "Cold start — Thaw" };

/** One cold start: its phases with bytes and throughput, the options weighed, what bounded it. */
export default async function ColdStartPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <DashboardShell active="none">
      {() => (
        <section className="card" aria-labelledby="cold-start-title" data-testid="cold-start-page">
          <h1 id="cold-start-title">Cold start</h1>
          <LiveColdStarts />
          <ColdStartDetail id={id} standalone />
        </section>
      )}
    </DashboardShell>
  );
}
