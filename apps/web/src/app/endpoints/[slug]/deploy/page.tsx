import { DashboardShell } from "../../../../components/dashboard-shell.tsx";
import { env } from "../../../../env.ts";
import { DeployWizard } from "../../../../components/deploy-wizard/deploy-wizard.tsx";

export const metadata = { title: "New deployment — Thaw" };

/** Rolls an existing endpoint to a new deployment version (image and model steps of the wizard). */
export default async function NewDeploymentPage({ params }: { params: Promise<{ slug: string }> }) {
  const { slug } = await params;
  return (
    <DashboardShell active="none">
      {(me) =>
        me.can.deployEndpoints ? (
          <DeployWizard endpointSlug={slug} trustedRegistries={env().THAW_TRUSTED_REGISTRIES} />
        ) : (
          <section className="card" data-testid="deploy-forbidden">
            <h2>New deployment of {slug}</h2>
            <p className="muted">Your role ({me.org?.role}) may not deploy endpoints.</p>
          </section>
        )
      }
    </DashboardShell>
  );
}
