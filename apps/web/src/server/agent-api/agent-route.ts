import { authenticateNode, parseInput, type Actor } from "@thaw/core";
import type { DbClient } from "@thaw/db";
import type { z } from "zod";
import { getDb } from "../db.ts";
import { clientAddressOf } from "../http/client-of.ts";
import { bearerToken, errorResponse, jsonResponse, readJsonBody } from "../http/json-route.ts";
import { consumeLimit, limitKey } from "../limits/rate-limits.ts";
import { agentRouteLabel } from "../metrics/rest-route-label.ts";
import { countedRoute } from "../metrics/web-metrics.ts";

// The one route builder of the agent API (/api/agent/v1/*, paths in @thaw/protocol): who is
// calling, the body (bounded, JSON, parsed with the protocol's request schema, a bad field
// named), the core use case (whose follow-ups the route hands to followThrough), the answer
// checked against the protocol's response schema; every error as {"error":{"code","message","details"}} with the status of
// core's one code table.

/** A join proves itself with the one-time token in its body, which joinNode spends. */
export interface JoinCaller {
  db: DbClient;
  /** The address the request came from: the agent's must be it, or in THAW_AGENT_CIDRS. */
  sourceAddress: string;
}

/** Every other call carries the node's credential as a bearer token. */
export interface NodeCaller {
  db: DbClient;
  actor: Extract<Actor, { type: "node" }>;
}

type Authentication = "join-token" | "node-credential";
type CallerOf<A extends Authentication> = A extends "join-token" ? JoinCaller : NodeCaller;

export interface AgentRouteSpec<
  A extends Authentication,
  Body extends z.ZodType,
  Answer extends z.ZodType,
> {
  authentication: A;
  body: Body;
  answer: Answer;
  /** Largest body taken (default MAX_JSON_BODY_BYTES); larger is 413 before parsing. */
  limitBytes?: number;
  /** The use case, called with the authenticated caller and the parsed body. */
  call: (caller: CallerOf<A> & { input: z.output<Body> }) => Promise<z.input<Answer>>;
}

export function agentRoute<
  A extends Authentication,
  Body extends z.ZodType,
  Answer extends z.ZodType,
>(spec: AgentRouteSpec<A, Body, Answer>): (request: Request) => Promise<Response> {
  return countedRoute("agent", agentRouteLabel, async (request: Request) => {
    try {
      const caller = await authenticate(spec.authentication, request);
      const input = parseInput(spec.body, await readJsonBody(request, spec.limitBytes), "body");
      const answer = await spec.call({ ...(caller as CallerOf<A>), input });
      return jsonResponse(spec.answer.parse(answer));
    } catch (error) {
      return errorResponse(error, request);
    }
  });
}

async function authenticate(
  authentication: Authentication,
  request: Request,
): Promise<JoinCaller | NodeCaller> {
  const db = getDb();
  if (authentication === "node-credential")
    return { db, actor: await authenticateNode({ credential: bearerToken(request), db }) };
  const sourceAddress = clientAddressOf(request);
  // Guessing tokens costs the address's API budget, counted before the body is read.
  await consumeLimit("apiPerAddress", limitKey("join", sourceAddress));
  return { db, sourceAddress };
}
