"use server";

import { isAPIError } from "better-auth/api";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { isAppError } from "@thaw/core";
import { getAuth, getSessionUser } from "../server/auth.ts";
import { auditSignIn } from "../server/auth-audit.ts";
import { clientAddressOf } from "../server/http/client-of.ts";
import { admitSignInAttempt, signInSucceeded } from "../server/limits/sign-in-limits.ts";
import { log } from "../server/logger.ts";

export interface SignInState {
  error: string | null;
  email: string;
}

function formText(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === "string" ? value : "";
}

/** Email + password sign-in; nextCookies() stores the session cookie on success. */
export async function signInAction(_previous: SignInState, form: FormData): Promise<SignInState> {
  const email = formText(form, "email").trim();
  const password = formText(form, "password");
  if (!email || !password) return { error: "Enter your email and password.", email };
  const requestHeaders = await headers();
  const address = clientAddressOf(requestHeaders);
  try {
    await admitSignInAttempt(email, address);
    await getAuth().api.signInEmail({ body: { email, password }, headers: requestHeaders });
    await signInSucceeded(email);
    await auditSignIn(email, "signed_in", address);
  } catch (error) {
    if (isAppError(error) && error.code === "RATE_LIMITED") {
      await auditSignIn(email, "rate_limited", address);
      return { error: error.message, email };
    }
    await auditSignIn(email, "failed", address);
    if (isAPIError(error)) {
      const invalid = error.status === "UNAUTHORIZED" || error.statusCode === 401;
      return {
        error: invalid ? "Wrong email or password." : error.message || "Sign-in failed.",
        email,
      };
    }
    log().error({ err: error }, "sign-in failed");
    return { error: "Sign-in failed. Try again in a moment.", email };
  }
  redirect("/");
}

export async function signOutAction(): Promise<void> {
  const requestHeaders = await headers();
  const user = await getSessionUser(requestHeaders);
  await getAuth().api.signOut({ headers: requestHeaders });
  if (user) await auditSignIn(user.email, "signed_out", clientAddressOf(requestHeaders));
  redirect("/sign-in");
}
