import { bearerMatches } from "@thaw/core";
import { type IncomingMessage, type ServerResponse } from "node:http";
import { type Server, createServer } from "node:https";
import {
  AGENT_CALL_MAX_SKEW_SECONDS,
  AGENT_CALL_SCHEME,
  parseAgentCallAuthorization,
} from "@thaw/node-agent-client";
import {
  AGENT_ROUTES,
  type AgentRouteName,
  CaptureSnapshotRequest,
  ParkReplicaRequest,
  StartReplicaRequest,
  matchAgentPath,
} from "@thaw/protocol";
import { type Logger } from "pino";
import { z } from "zod";
import { AgentError } from "../agent-error.ts";
import { type HostAgent } from "../host/host-agent.ts";
import { type AgentMetrics } from "../metrics.ts";
import { type SimCloud, SimCloudLaunchRequest } from "../sim/sim-cloud.ts";
import { type AgentCallKeys, type NonceCache } from "./agent-call-auth.ts";
import { errorBody, parseBody, parseJsonBody, readBodyBytes, sendJson } from "./http-json.ts";

// The agent's HTTPS API for the scheduler (node:https, one small router over the protocol's
// AGENT_ROUTES; its answers and error codes are the protocol's too).
//
//   GET    /healthz                               {status}, nothing else (no auth: systemd, LBs)
//   GET    /metrics                               Prometheus, with THAW_AGENT_METRICS_TOKEN
//   GET    /hosts/{name}/healthz                  one host's health
//   POST   /hosts/{name}/v1/replicas              start a replica: 202, runs in the background
//   POST   /hosts/{name}/v1/replicas/{id}/park    park a ready replica into the warm pool
//   DELETE /hosts/{name}/v1/replicas/{id}         stop a replica (idempotent)
//   POST   /hosts/{name}/v1/snapshots             capture a snapshot of a running replica
//   GET    /hosts/{name}/v1/inventory             what the host holds
//   POST   /sim-cloud/v1/instances                launch a simulated host (sim cloud only)
//   GET    /sim-cloud/v1/instances                the sim cloud's instances
//   DELETE /sim-cloud/v1/instances/{id}           terminate one (idempotent)
//
// One process may serve many hosts (a sim fleet); each is addressed by its node name under
// /hosts/{name}, which is the `agentUrl` it joined with. When the process serves exactly
// one host, /v1/… address it directly. Host routes take only a call the scheduler signed for
// that host's node (agent-call-signature.ts) — never a bearer token, the node's own
// credential included — and the signature is checked before any host is looked up: a call
// for an unknown host, a host not joined, another node, or with a bad, stale or replayed
// signature all get the same 401, naming nothing.

export interface AgentServerOptions {
  hosts: ReadonlyMap<string, HostAgent>;
  log: Logger;
  metrics: AgentMetrics;
  /** True once shutdown began: starts are refused with 503. */
  isDraining: () => boolean;
  /** The sim cloud this process runs, if any (THAW_SIM_CLOUD_TOKEN). */
  simCloud?: SimCloud;
  /** The agent's key and self-signed certificate (its SHA-256 is pinned at join). */
  tls: { key: string; cert: string };
  /** The scheduler's keys that calls must be signed with. */
  callKeys: AgentCallKeys;
  /** Nonces of accepted calls, so none is accepted twice. */
  nonces: NonceCache;
  /** THAW_AGENT_METRICS_TOKEN: /metrics wants it as a bearer token; unset, /metrics is off. */
  metricsToken?: string | undefined;
}

const ReplicaId = z.uuid({ message: "expected a replica id (UUID)" });

type HostHandler = (
  host: HostAgent,
  /** The body as JSON (undefined: none), read and signature-checked before the handler runs. */
  body: unknown,
  /** The route's path parameters, in order, still URL-encoded. */
  params: string[],
) => Promise<[number, unknown]>;

/** What each route of the protocol's agent API (AGENT_ROUTES) does on a host. */
const HOST_HANDLERS: Record<AgentRouteName, HostHandler> = {
  startReplica: async (host, body) =>
    Promise.resolve([202, host.startReplica(parseBody(StartReplicaRequest, requireBody(body)))]),
  parkReplica: async (host, given, [id = ""]) => {
    const replicaId = parseParam(id);
    const body = given ?? {};
    if (typeof body === "object" && body !== null && !Array.isArray(body)) {
      const given = (body as { replicaId?: unknown }).replicaId;
      if (given !== undefined && given !== replicaId) {
        throw new AgentError(
          "invalid_request",
          "replicaId: does not match the replica in the URL",
          "replicaId",
        );
      }
    }
    const parsed = parseBody(ParkReplicaRequest, { ...body, replicaId });
    return [200, await host.parkReplica(parsed)];
  },
  stopReplica: async (host, _body, [id = ""]) => [200, await host.stopReplica(parseParam(id))],
  captureSnapshot: async (host, body) => [
    200,
    await host.captureSnapshot(parseBody(CaptureSnapshotRequest, requireBody(body))),
  ],
  inventory: async (host) => [200, await host.inventory()],
  health: (host) => Promise.resolve([200, { status: host.isDraining ? "draining" : "ok" }]),
};

const ROUTE_NAMES = Object.keys(AGENT_ROUTES) as AgentRouteName[];

/** A route's metrics label: the protocol's method and path (a host's health under its prefix). */
function routeLabel(name: AgentRouteName): string {
  const { method, path } = AGENT_ROUTES[name];
  return name === "health" ? `${method} /hosts/{name}${path}` : `${method} ${path}`;
}

export function createAgentServer(options: AgentServerOptions): Server {
  const server = createServer(
    { key: options.tls.key, cert: options.tls.cert, minVersion: "TLSv1.2" },
    (request, response) => {
      void handle(options, request, response);
    },
  );
  // Slow or idle clients must not hold sockets forever.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 10_000;
  return server;
}

async function handle(
  options: AgentServerOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  let label = "unmatched";
  try {
    const url = new URL(request.url ?? "/", "http://agent.invalid");
    const path = url.pathname;
    const method = request.method ?? "GET";

    if (path === AGENT_ROUTES.health.path) {
      label = "GET /healthz";
      allowMethods(method, ["GET"]);
      sendJson(response, 200, { status: options.isDraining() ? "draining" : "ok" });
      return;
    }
    if (path === "/metrics") {
      label = "GET /metrics";
      allowMethods(method, ["GET"]);
      if (!options.metricsToken) throw new AgentError("not_found", "no such route");
      if (!bearerMatches(request.headers.authorization, options.metricsToken))
        throw new AgentError("unauthorized", "/metrics wants THAW_AGENT_METRICS_TOKEN");
      const text = await options.metrics.registry.metrics();
      response.writeHead(200, { "content-type": options.metrics.registry.contentType });
      response.end(text);
      return;
    }

    const cloudPath = /^\/sim-cloud\/v1\/instances(?:\/([^/]+))?$/.exec(path);
    if (cloudPath && options.simCloud) {
      const cloud = options.simCloud;
      const id = cloudPath[1];
      label = `${method} /sim-cloud/v1/instances${id === undefined ? "" : "/{id}"}`;
      allowMethods(method, id === undefined ? ["GET", "POST"] : ["DELETE"]);
      cloud.authenticate(request.headers.authorization);
      if (method === "GET") sendJson(response, 200, { instances: cloud.list() });
      else if (method === "POST")
        sendJson(
          response,
          201,
          cloud.launch(parseBody(SimCloudLaunchRequest, requireBody(await readJson(request)))),
        );
      else sendJson(response, 200, await cloud.terminate(decodePart(id ?? "", "instanceId")));
      return;
    }

    // Everything else is the scheduler's: a call signed for one host's node, checked before
    // the host is looked up.
    label = "host call";
    const { host, body } = await authenticateCall(options, request, url);
    const rest = hostPath(path);
    const matches = ROUTE_NAMES.flatMap((name) => {
      const params = matchAgentPath(name, rest);
      return params ? [{ name, params }] : [];
    });
    if (matches.length === 0) throw new AgentError("not_found", "no such route");
    const found = matches.find((m) => AGENT_ROUTES[m.name].method === method);
    if (!found)
      allowMethods(
        method,
        matches.map((m) => AGENT_ROUTES[m.name].method),
      );
    const { name, params } = found!;
    label = routeLabel(name);
    const [status, answer] = await HOST_HANDLERS[name](host, parseJsonBody(request, body), params);
    sendJson(response, status, answer);
  } catch (error) {
    if (error instanceof AgentError) {
      const headers: Record<string, string> = {};
      if (error.status === 401)
        headers["www-authenticate"] =
          label === "GET /metrics" ? 'Bearer realm="thaw-agent-metrics"' : AGENT_CALL_SCHEME;
      if (error.status === 503) headers["retry-after"] = "5";
      if (error.status === 405)
        headers.allow = (error.details?.allow as string[] | undefined)?.join(", ") ?? "";
      sendJson(response, error.status, errorBody(error), headers);
    } else {
      options.log.error(
        { err: error, method: request.method, url: request.url },
        "agent API request failed",
      );
      const failure = new AgentError(
        "internal",
        error instanceof Error ? error.message : String(error),
      );
      sendJson(response, failure.status, errorBody(failure));
    }
  } finally {
    options.metrics.httpRequests.inc({ route: label, status: String(response.statusCode) });
    // A refused body may still be arriving: drop it rather than leave the socket half-read.
    if (!request.readableEnded) request.resume();
  }
}

function allowMethods(method: string, allowed: string[]): void {
  if (!allowed.includes(method)) {
    throw new AgentError(
      "method_not_allowed",
      `${method} is not allowed here; use ${allowed.join(" or ")}`,
      undefined,
      {
        allow: allowed,
      },
    );
  }
}

/** One answer for every refused call: it tells a prober nothing about hosts or keys. */
function unauthorized(): AgentError {
  return new AgentError(
    "unauthorized",
    `expected a call signed by the control plane's scheduler (${AGENT_CALL_SCHEME})`,
    "authorization",
  );
}

/**
 * The scheduler's signature over this very request: its node, method, path and query, body,
 * a timestamp within ±60 s and a nonce not seen before. Then the host it addresses, which
 * must be the signed node. Every failure is the same 401.
 */
async function authenticateCall(
  options: AgentServerOptions,
  request: IncomingMessage,
  url: URL,
): Promise<{ host: HostAgent; body: Buffer }> {
  const signed = parseAgentCallAuthorization(request.headers.authorization);
  const now = Date.now();
  // Cheap checks before the body is read.
  if (!signed || Math.abs(now / 1000 - signed.timestamp) > AGENT_CALL_MAX_SKEW_SECONDS)
    throw unauthorized();
  const body = await readBodyBytes(request);
  const key = options.callKeys.verify(
    signed,
    { method: request.method ?? "GET", path: `${url.pathname}${url.search}`, body },
    now,
  );
  if (!key || !options.nonces.remember(signed.nonce, now)) throw unauthorized();
  const host = hostOf(options.hosts, url.pathname);
  if (!host || host.nodeId?.toLowerCase() !== signed.nodeId || !host.trustsCallKey(key))
    throw unauthorized();
  return { host, body };
}

/** The host a path addresses: /hosts/{name}/…, or /v1/… when the process serves one. */
function hostOf(hosts: ReadonlyMap<string, HostAgent>, path: string): HostAgent | undefined {
  const named = /^\/hosts\/([^/]+)(\/.*)?$/.exec(path);
  if (named) {
    let name: string;
    try {
      name = decodeURIComponent(named[1] ?? "");
    } catch {
      return undefined;
    }
    return hosts.get(name);
  }
  return hosts.size === 1 ? [...hosts.values()][0] : undefined;
}

/** The route within the host: what follows /hosts/{name}, or the whole path. */
function hostPath(path: string): string {
  const named = /^\/hosts\/[^/]+(\/.*)?$/.exec(path);
  return named ? (named[1] ?? "/") : path;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  return parseJsonBody(request, await readBodyBytes(request));
}

function requireBody(body: unknown): unknown {
  if (body === undefined)
    throw new AgentError("invalid_request", "body: expected a JSON object", "body");
  return body;
}

function parseParam(id: string): string {
  const parsed = ReplicaId.safeParse(decodePart(id, "replicaId"));
  if (!parsed.success)
    throw new AgentError(
      "invalid_request",
      `replicaId: ${parsed.error.issues[0]?.message}`,
      "replicaId",
    );
  return parsed.data;
}

function decodePart(part: string, field: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new AgentError("invalid_request", `${field}: not a valid URL path segment`, field);
  }
}
