import { auditSignIn } from "../../../../server/auth-audit.ts";
import { getAuth, getSessionUser } from "../../../../server/auth.ts";
import { clientAddressOf } from "../../../../server/http/client-of.ts";
import { errorResponse, readBodyBytes } from "../../../../server/http/json-route.ts";
import { consumeLimit, limitKey } from "../../../../server/limits/rate-limits.ts";
import { admitSignInAttempt, signInSucceeded } from "../../../../server/limits/sign-in-limits.ts";

// better-auth's handler for /api/auth/* (sign-in, sign-out, get-session), behind the web
// tier's own limits: the client address's budget, a body of at most AUTH_BODY_BYTES read
// before anything parses it, and for an email sign-in the per-account and per-address
// attempt budgets (better-auth's own limiter is off: it counted in process memory, keyed by
// a header any client sets).

/** Auth bodies are an email and a password, or nothing: 16 KiB is generous. */
const AUTH_BODY_BYTES = 16 * 1024;

async function handle(request: Request): Promise<Response> {
  try {
    const address = clientAddressOf(request);
    await consumeLimit("authPerAddress", limitKey("auth", address));
    const body =
      request.method === "GET" || request.method === "HEAD"
        ? undefined
        : await readBodyBytes(request, AUTH_BODY_BYTES);
    const path = new URL(request.url).pathname;
    let email: string | undefined;
    if (path.endsWith("/sign-in/email") && body) {
      email = emailOf(body);
      if (email)
        await admitSignInAttempt(email, address).catch(async (error: unknown) => {
          await auditSignIn(email!, "rate_limited", address);
          throw error;
        });
    }
    const signingOut = path.endsWith("/sign-out") ? await getSessionUser(request.headers) : null;
    const response = await getAuth().handler(
      new Request(request.url, {
        method: request.method,
        headers: request.headers,
        ...(body ? { body: body as BodyInit } : {}),
      }),
    );
    if (email && response.ok) await signInSucceeded(email);
    if (email) await auditSignIn(email, response.ok ? "signed_in" : "failed", address);
    if (signingOut && response.ok) await auditSignIn(signingOut.email, "signed_out", address);
    return response;
  } catch (error) {
    return errorResponse(error, request);
  }
}

function emailOf(body: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(body).toString("utf8")) as { email?: unknown };
    return typeof parsed.email === "string" ? parsed.email : undefined;
  } catch {
    return undefined;
  }
}

export { handle as GET, handle as POST };
