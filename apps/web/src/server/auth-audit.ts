import { recordSignIn } from "@thaw/core";
import { getDb } from "./db.ts";
import { log } from "./logger.ts";

/** Audits a sign-in or sign-out; a failure to write it never fails the sign-in itself. */
export async function auditSignIn(
  email: string,
  outcome: "signed_in" | "failed" | "rate_limited" | "signed_out",
  address: string,
): Promise<void> {
  try {
    await recordSignIn({ db: getDb(), email, outcome, address });
  } catch (error) {
    log().warn(
      { err: error instanceof Error ? error.message : String(error), outcome },
      "sign-in not audited",
    );
  }
}
