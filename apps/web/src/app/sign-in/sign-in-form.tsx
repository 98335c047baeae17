"use client";

import { useActionState } from "react";
import { signInAction, type SignInState } from "../auth-actions.ts";

const initial: SignInState = { error: null, email: "" };

export function SignInForm() {
  const [state, formAction, pending] = useActionState(signInAction, initial);
  return (
    <form action={formAction} className="form" noValidate>
      <label htmlFor="email">Email</label>
      <input
        id="email"
        name="email"
        type="email"
        autoComplete="email"
        required
        defaultValue={state.email}
        aria-invalid={state.error ? true : undefined}
        aria-describedby={state.error ? "sign-in-error" : undefined}
      />
      <label htmlFor="password">Password</label>
      <input
        id="password"
        name="password"
        type="password"
        autoComplete="current-password"
        required
        aria-invalid={state.error ? true : undefined}
        aria-describedby={state.error ? "sign-in-error" : undefined}
      />
      {state.error && (
        <p id="sign-in-error" className="form-error" role="alert" data-testid="sign-in-error">
          {state.error}
        </p>
      )}
      <button type="submit" className="button primary" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
