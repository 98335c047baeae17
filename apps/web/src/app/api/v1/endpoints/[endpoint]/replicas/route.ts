import { setDesiredReplicas } from "@thaw/core";
import { readJsonBody } from "../../../../../../server/http/json-route.ts";
import { followThrough } from "../../../../../../server/follow-through.ts";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";

/** PUT /api/v1/endpoints/{endpoint}/replicas {"replicas": n} — Idempotency-Key honoured. */
export const PUT = restRoute(
  "endpoints:scale",
  async ({ request, actor, params, db, traceparent }) => {
    const result = await setDesiredReplicas({
      actor,
      endpoint: params.endpoint ?? "",
      input: await readJsonBody(request, 4_096),
      idempotencyKey: request.headers.get("idempotency-key"),
      source: "api",
      traceparent,
      db,
    });
    return { body: await followThrough(result) };
  },
);
