import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, type Actor } from "../auth/index.ts";
import { listColdStarts } from "../cold-starts/index.ts";
import { parseInput } from "../errors/index.ts";
import { findEndpoint } from "./find-endpoint.ts";

export const ListEndpointColdStartsQuery = z
  .object({ limit: z.coerce.number().int().min(1).max(100).default(25) })
  .strict();

/** An endpoint's most recent cold starts, newest first (REST's GET /endpoints/{endpoint}/cold-starts). */
export async function listEndpointColdStarts({
  actor,
  endpoint,
  input,
  db,
  where = "query",
}: {
  actor: Actor;
  endpoint: unknown;
  input?: unknown;
  db: Db;
  where?: string;
}) {
  assertCan(actor, "endpoints:read");
  const { limit } = parseInput(ListEndpointColdStartsQuery, input ?? {}, where);
  const found = await findEndpoint(db, actor, endpoint);
  return {
    coldStarts: await listColdStarts({ actor, input: { endpointId: found.id, limit }, db }),
  };
}
