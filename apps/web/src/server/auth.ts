import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { nextCookies } from "better-auth/next-js";
import { env } from "../env.ts";
import { getDb } from "./db.ts";
import { CLIENT_ADDRESS_HEADER } from "./http/client-of.ts";

function createAuth() {
  const { BETTER_AUTH_SECRET, BETTER_AUTH_URL } = env();
  return betterAuth({
    appName: "Thaw",
    secret: BETTER_AUTH_SECRET,
    baseURL: BETTER_AUTH_URL,
    database: prismaAdapter(getDb(), { provider: "postgresql" }),
    // Open sign-up let anyone claim an email before its owner was invited (account
    // pre-hijack); people are added by invitation or by `org:create`.
    emailAndPassword: {
      enabled: true,
      minPasswordLength: 10,
      // Accounts come from org:create and invitations, never from sign-up: an open sign-up
      // let anyone claim an address before its owner was invited (and, answering "already
      // exists", told anyone which addresses had accounts).
      disableSignUp: true,
    },
    // The web tier limits /api/auth and every sign-in itself (limits/), in Redis and by the
    // address the request edge vouches for; better-auth's limiter counted per process and
    // believed any client's X-Forwarded-For.
    rateLimit: { enabled: false },
    advanced: { ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] } },
    session: { expiresIn: 60 * 60 * 24 * 7, updateAge: 60 * 60 * 24 },
    telemetry: { enabled: false },
    // nextCookies must stay the last plugin: it copies Set-Cookie into Next's cookie store
    // when auth.api is called from server actions.
    plugins: [nextCookies()],
  });
}

export type Auth = ReturnType<typeof createAuth>;

// Created on first use, so that `next build` can import this module without secrets.
let auth: Auth | undefined;
export function getAuth(): Auth {
  auth ??= createAuth();
  return auth;
}

export interface SessionUser {
  id: string;
  email: string;
  name: string;
}

/** The signed-in user for a request's headers (session cookie), or null. */
export async function getSessionUser(headers: Headers): Promise<SessionUser | null> {
  const session = await getAuth().api.getSession({ headers });
  if (!session) return null;
  return { id: session.user.id, email: session.user.email, name: session.user.name };
}
