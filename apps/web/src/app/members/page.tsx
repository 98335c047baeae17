import { DashboardShell } from "../../components/dashboard-shell.tsx";
import { MembersCard } from "../../components/members-card.tsx";
import { env } from "../../env.ts";

export default function MembersPage() {
  return (
    <DashboardShell active="members">
      {(me) =>
        me.can.manageMembers ? (
          <MembersCard
            origin={new URL(env().BETTER_AUTH_URL).origin}
            manageOwners={me.can.manageOwners}
          />
        ) : (
          <section className="card">
            <h2>Members</h2>
            <p className="muted">Only owners and admins manage members.</p>
          </section>
        )
      }
    </DashboardShell>
  );
}
