"use server";

import { acceptInvitation, isAppError, MIN_PASSWORD_LENGTH } from "@thaw/core";
import { hashPassword } from "better-auth/crypto";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { getAuth, getSessionUser } from "../../server/auth.ts";
import { getDb } from "../../server/db.ts";
import { log } from "../../server/logger.ts";

export interface AcceptState {
  error: string | null;
}

function formText(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === "string" ? value : "";
}

/**
 * Accepts an invitation: a new account gets the password typed here (and is signed in); an
 * existing one must be the signed-in account. Then to the org's dashboard.
 */
export async function acceptInvitationAction(
  _previous: AcceptState,
  form: FormData,
): Promise<AcceptState> {
  const token = formText(form, "token");
  const password = formText(form, "password");
  const requestHeaders = await headers();
  const user = await getSessionUser(requestHeaders);
  let joined;
  try {
    if (!user && password.length < MIN_PASSWORD_LENGTH)
      return { error: `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.` };
    joined = await acceptInvitation({
      token,
      db: getDb(),
      signedInUserId: user?.id ?? null,
      name: formText(form, "name"),
      passwordHash: () => hashPassword(password),
    });
    if (joined.created)
      await getAuth().api.signInEmail({
        body: { email: joined.email, password },
        headers: requestHeaders,
      });
  } catch (error) {
    if (isAppError(error)) return { error: error.message };
    log().error({ err: error }, "accepting an invitation failed");
    return { error: "Could not accept the invitation. Try again in a moment." };
  }
  redirect("/");
}
