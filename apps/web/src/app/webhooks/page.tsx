import { DashboardShell } from "../../components/dashboard-shell.tsx";
import { WebhooksCard } from "../../components/webhooks-card.tsx";

export default function WebhooksPage() {
  return (
    <DashboardShell active="webhooks">
      {(me) =>
        me.can.manageWebhooks ? (
          <WebhooksCard />
        ) : (
          <section className="card">
            <h2>Webhooks</h2>
            <p className="muted">Only admins and owners can manage webhooks.</p>
          </section>
        )
      }
    </DashboardShell>
  );
}
