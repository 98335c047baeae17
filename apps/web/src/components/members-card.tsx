"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { OrgRole } from "@thaw/core/schemas";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";

type Role = OrgRole;

/** The org's members and invitations: invite (a one-time link), change roles, remove. */
export function MembersCard({ origin, manageOwners }: { origin: string; manageOwners: boolean }) {
  // An admin grants roles up to admin; the owner role is the owners' own.
  const ROLES = manageOwners ? OrgRole.options : OrgRole.options.filter((r) => r !== "owner");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.members.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.members.list.queryFilter());
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const invite = useMutation(
    trpc.members.invite.mutationOptions({
      onSuccess: () => {
        setEmail("");
        return refresh();
      },
    }),
  );
  const changeRole = useMutation(trpc.members.changeRole.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSuccess: refresh }));
  const revoke = useMutation(trpc.members.revokeInvitation.mutationOptions({ onSuccess: refresh }));
  const failure = [invite, changeRole, remove, revoke].find((m) => m.isError)?.error;

  return (
    <section className="card" aria-labelledby="members-title">
      <div className="card-head">
        <h2 id="members-title">Members</h2>
      </div>
      <form
        className="api-key-form"
        onSubmit={(event) => {
          event.preventDefault();
          invite.mutate({ email, role });
        }}
      >
        <label>
          Email{" "}
          <input
            name="invite-email"
            type="email"
            required
            maxLength={254}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          Role{" "}
          <select name="invite-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="button primary" disabled={invite.isPending}>
          {invite.isPending ? "Inviting…" : "Invite"}
        </button>
      </form>
      {failure && (
        <p className="form-error" role="alert">
          {errorMessage(failure)}
        </p>
      )}
      {invite.data && (
        <div className="token-box" role="status" data-testid="invitation">
          <p>
            Send this link to <strong>{invite.data.email}</strong> — shown once, valid until{" "}
            {invite.data.expiresAt.toLocaleString()}. It works once.
          </p>
          <div className="token-row">
            <code className="token" data-testid="invitation-link">
              {`${origin}/invite/${invite.data.token}`}
            </code>
            <button type="button" className="button" onClick={() => invite.reset()}>
              Done
            </button>
          </div>
        </div>
      )}
      <table data-testid="members-table">
        <thead>
          <tr>
            <th>Member</th>
            <th>Role</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {list.data?.members.map((m) => (
            <tr key={m.userId} data-testid="member-row" data-email={m.email}>
              <td className="strong">{m.email}</td>
              <td>
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  disabled={changeRole.isPending || (m.role === "owner" && !manageOwners)}
                  onChange={(e) =>
                    changeRole.mutate({ userId: m.userId, role: e.target.value as Role })
                  }
                >
                  {(m.role === "owner" && !manageOwners ? OrgRole.options : ROLES).map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </td>
              <td>
                <button
                  type="button"
                  className="button"
                  disabled={remove.isPending}
                  onClick={() => remove.mutate({ userId: m.userId })}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))}
          {list.data?.invitations.map((i) => (
            <tr key={i.id} data-testid="invitation-row" data-email={i.email}>
              <td>
                {i.email} <span className="muted">(invited)</span>
              </td>
              <td>{i.role}</td>
              <td>
                <button
                  type="button"
                  className="button"
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate({ id: i.id })}
                >
                  Withdraw
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
