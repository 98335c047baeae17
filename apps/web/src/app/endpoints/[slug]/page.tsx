import { DashboardShell } from "../../../components/dashboard-shell.tsx";
import { EndpointDetail } from "../../../components/endpoint-detail.tsx";

export const metadata = { title: "Endpoint — Thaw" };

/** One endpoint: status, scaling, deployments, replicas and where its cold starts' seconds went. */
export default async function EndpointPage({ params }: { params: Promise<{ slug: string }> }) {
  const { slug } = await params;
  return (
    <DashboardShell active="none">
      {(me) => (
        <EndpointDetail
          slug={slug}
          canScale={me.can.scaleEndpoints}
          canEdit={me.can.deployEndpoints}
        />
      )}
    </DashboardShell>
  );
}
