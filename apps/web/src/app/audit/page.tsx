import { AuditLogCard } from "../../components/audit-log-card.tsx";
import { DashboardShell } from "../../components/dashboard-shell.tsx";

export default function AuditPage() {
  return (
    <DashboardShell active="audit">
      {(me) =>
        me.can.readAudit ? (
          <AuditLogCard />
        ) : (
          <section className="card">
            <h2>Audit log</h2>
            <p className="muted">Only admins and owners can read the audit log.</p>
          </section>
        )
      }
    </DashboardShell>
  );
}
