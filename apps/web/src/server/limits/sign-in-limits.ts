import { consumeLimit, limitKey, resetLimit } from "./rate-limits.ts";

// Sign-in attempts are limited per account and per client address, however they arrive (the
// dashboard's form calls better-auth's API directly, which its own limiter never sees; the
// HTTP route /api/auth/sign-in/email too), and before the password hash is computed: each
// attempt costs an scrypt. A success clears the account's count; a spoofed address header
// cannot lift the per-account limit, since the account is the key.

const accountKey = (email: string) => limitKey("sign-in", email.trim().toLowerCase());

/** Takes one attempt from the address's and the account's budgets; throws RATE_LIMITED. */
export async function admitSignInAttempt(email: string, address: string): Promise<void> {
  await consumeLimit("signInPerAccount", accountKey(email));
  await consumeLimit("signInPerAddress", limitKey("sign-in-address", address));
}

/** A signed-in account starts its count afresh. */
export async function signInSucceeded(email: string): Promise<void> {
  await resetLimit("signInPerAccount", accountKey(email));
}
