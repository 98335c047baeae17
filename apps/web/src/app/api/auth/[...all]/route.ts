import { AppError } from "@thaw/core";
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
    if (path.endsWith("/sign-in/email") && request.method === "POST") {
      // Every attempt is counted against its account, so one this route cannot read an email
      // from is refused rather than handed on uncounted (better-auth also reads form bodies).
      email = signInEmailOf(request.headers.get("content-type"), body);
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

/**
 * The account an email sign-in is for: a JSON body (decoded as fetch's request.json() does,
 * a byte-order mark dropped, so the limit reads what better-auth will) with a string `email`.
 */
function signInEmailOf(contentType: string | null, body: Uint8Array | undefined): string {
  const mediaType = contentType?.split(";")[0]!.trim().toLowerCase();
  if (mediaType !== "application/json")
    throw new AppError("BAD_REQUEST", "content-type: an email sign-in is a JSON body.", {
      field: "content-type",
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8").decode(body ?? new Uint8Array()));
  } catch {
    throw new AppError("BAD_REQUEST", "body: not valid JSON.", { field: "body" });
  }
  const email = (parsed as { email?: unknown } | null)?.email;
  if (typeof email !== "string" || email.trim() === "")
    throw new AppError("BAD_REQUEST", "body.email: expected the account's email.", {
      field: "body.email",
    });
  return email;
}

export { handle as GET, handle as POST };
