import { ApiKeysCard } from "../components/api-keys-card.tsx";
import { ColdStartsCard } from "../components/cold-starts-card.tsx";
import { DashboardShell } from "../components/dashboard-shell.tsx";
import { EndpointsTable } from "../components/endpoints-table.tsx";
import { FleetTable } from "../components/fleet-table.tsx";
import { GpuCostCard } from "../components/gpu-cost-card.tsx";
import { HealthCard } from "../components/health-card.tsx";
import { OrgSettingsCard } from "../components/org-settings-card.tsx";
import { QuotasCard } from "../components/quotas-card.tsx";
import { RegistryCredentialsCard } from "../components/registry-credentials-card.tsx";

export default function DashboardPage() {
  return (
    <DashboardShell active="overview">
      {(me) => (
        <>
          <HealthCard />
          <EndpointsTable />
          <ColdStartsCard />
          <GpuCostCard />
          <FleetTable canCreateJoinToken={me.can.createJoinToken} />
          {me.can.manageApiKeys && <ApiKeysCard />}
          {me.can.manageOrgSettings && <OrgSettingsCard />}
          {me.can.manageRegistries && <RegistryCredentialsCard />}
          <QuotasCard />
        </>
      )}
    </DashboardShell>
  );
}
