import { DashboardShell } from "../../../components/dashboard-shell.tsx";
import { env } from "../../../env.ts";
import { DeployWizard } from "../../../components/deploy-wizard/deploy-wizard.tsx";

export const metadata = { title: "Deploy an endpoint — Thaw" };

export default function NewEndpointPage() {
  return (
    <DashboardShell active="deploy">
      {(me) =>
        me.can.deployEndpoints ? (
          <DeployWizard trustedRegistries={env().THAW_TRUSTED_REGISTRIES} />
        ) : (
          <section className="card" data-testid="deploy-forbidden">
            <h2>Deploy an endpoint</h2>
            <p className="muted">Your role ({me.org?.role}) may not deploy endpoints.</p>
          </section>
        )
      }
    </DashboardShell>
  );
}
