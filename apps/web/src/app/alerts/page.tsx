import { AlertEpisodesCard } from "../../components/alert-episodes-card.tsx";
import { AlertRulesCard } from "../../components/alert-rules-card.tsx";
import { DashboardShell } from "../../components/dashboard-shell.tsx";

export default function AlertsPage() {
  return (
    <DashboardShell active="alerts">
      {(me) => (
        <>
          <AlertEpisodesCard />
          <AlertRulesCard canManage={me.can.manageAlerts} />
        </>
      )}
    </DashboardShell>
  );
}
