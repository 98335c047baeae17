"use client";

import { useActionState } from "react";
import { acceptInvitationAction, type AcceptState } from "./actions.ts";

const initial: AcceptState = { error: null };

export function AcceptInvitationForm({
  token,
  newAccount,
  signedInAs,
  invitedEmail,
}: {
  token: string;
  newAccount: boolean;
  signedInAs: string | null;
  invitedEmail: string;
}) {
  const [state, formAction, pending] = useActionState(acceptInvitationAction, initial);
  if (!newAccount && signedInAs !== invitedEmail)
    return (
      <p className="muted" data-testid="invitation-sign-in-first">
        An account {invitedEmail} exists: <a href="/sign-in">sign in</a> as it, then open this link
        again.
      </p>
    );
  return (
    <form action={formAction} className="form">
      <input type="hidden" name="token" value={token} />
      {newAccount && (
        <>
          <label htmlFor="name">Your name</label>
          <input id="name" name="name" maxLength={100} autoComplete="name" />
          <label htmlFor="password">Choose a password</label>
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="new-password"
            minLength={10}
            required
          />
        </>
      )}
      {state.error && (
        <p className="form-error" role="alert" data-testid="accept-error">
          {state.error}
        </p>
      )}
      <button type="submit" className="button primary" disabled={pending}>
        {pending ? "Joining…" : "Accept invitation"}
      </button>
    </form>
  );
}
