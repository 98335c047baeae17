import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { ApiKeysCard } from "../components/api-keys-card.tsx";
import { ColdStartsCard } from "../components/cold-starts-card.tsx";
import { DashboardHeader } from "../components/dashboard-header.tsx";
import { EndpointsTable } from "../components/endpoints-table.tsx";
import { FleetTable } from "../components/fleet-table.tsx";
import { HealthCard } from "../components/health-card.tsx";
import { createRequestContext } from "../server/trpc/context.ts";
import { createCaller } from "../server/trpc/root.ts";
import { TrpcReactProvider } from "../trpc/client.tsx";

export default async function DashboardPage() {
  const context = await createRequestContext(await headers());
  if (!context.user) redirect("/sign-in");
  const me = await createCaller(context).me();

  return (
    <TrpcReactProvider>
      <DashboardHeader
        email={me.user.email}
        orgName={me.org?.name ?? null}
        role={me.org?.role ?? null}
      />
      <main className="dashboard">
        {me.org ? (
          <>
            <HealthCard />
            <EndpointsTable />
            <ColdStartsCard />
            <FleetTable canCreateJoinToken={me.can.createJoinToken} />
            {me.can.manageApiKeys && <ApiKeysCard />}
          </>
        ) : (
          <section className="card">
            <h2>No organisation yet</h2>
            <p className="muted">Ask an owner of your organisation to invite you.</p>
          </section>
        )}
      </main>
    </TrpcReactProvider>
  );
}
