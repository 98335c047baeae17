import { getAuth } from "../../../../server/auth.ts";

// better-auth's handler for /api/auth/* (sign-in, sign-up, sign-out, get-session).
const handler = (request: Request) => getAuth().handler(request);

export { handler as GET, handler as POST };
