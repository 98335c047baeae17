import { headers } from "next/headers";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { createRequestContext } from "../server/trpc/context.ts";
import { createCaller } from "../server/trpc/root.ts";
import { TrpcReactProvider } from "../trpc/client.tsx";
import { DashboardHeader } from "./dashboard-header.tsx";

export type Me = Awaited<ReturnType<ReturnType<typeof createCaller>["me"]>>;
export type NavKey = "overview" | "deploy" | "audit" | "members" | "webhooks" | "alerts" | "none";

/**
 * Every dashboard page: a signed-out visitor goes to /sign-in; a user without an org sees
 * why; otherwise the header, the navigation and the page, inside the tRPC provider.
 */
export async function DashboardShell({
  active,
  children,
}: {
  active: NavKey;
  children: (me: Me) => ReactNode;
}) {
  const context = await createRequestContext(await headers());
  if (!context.user) redirect("/sign-in");
  const me = await createCaller(context).me();
  return (
    <TrpcReactProvider>
      <DashboardHeader
        email={me.user.email}
        orgName={me.org?.name ?? null}
        role={me.org?.role ?? null}
        active={active}
        links={{
          deploy: me.can.deployEndpoints,
          audit: me.can.readAudit,
          members: me.can.manageMembers,
          webhooks: me.can.manageWebhooks,
          alerts: true,
        }}
      />
      <main className="dashboard">
        {me.org ? (
          children(me)
        ) : (
          <section className="card">
            <h2>No organisation yet</h2>
            <p className="muted">
              Ask an owner of your organisation to invite you, or create the first one with{" "}
              <code>pnpm --silent org:create</code> on the server.
            </p>
          </section>
        )}
      </main>
    </TrpcReactProvider>
  );
}
