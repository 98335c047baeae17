import { getSessionCookie } from "better-auth/cookies";
import { NextResponse, type NextRequest } from "next/server";

/**
 * Optimistic redirect of signed-out visitors to /sign-in, by cookie presence only. It is a
 * convenience, not a guard: pages re-check the session, and authorization lives in the tRPC
 * context and the use cases of @thaw/core.
 */
export function proxy(request: NextRequest) {
  if (getSessionCookie(request)) return NextResponse.next();
  const signIn = new URL("/sign-in", request.url);
  return NextResponse.redirect(signIn);
}

export const config = {
  // Dashboard pages only: not the APIs (they answer 401 themselves), assets, /sign-in or an
  // invitation link (its invitee has no account yet).
  matcher: ["/((?!api/|_next/|sign-in|invite/|favicon.ico|.*\\.[a-z0-9]+$).*)"],
};
