import { parseSealingKey } from "@thaw/core";
import { env } from "../env.ts";

let key: Buffer | null | undefined;

/** The operator's THAW_CREDENTIALS_KEY as bytes, or null when it is unset. */
export function sealingKey(): Buffer | null {
  if (key === undefined) key = parseSealingKey(env().THAW_CREDENTIALS_KEY);
  return key;
}
