import { createHash, timingSafeEqual } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import {
  CaptureSnapshotRequest,
  ParkReplicaRequest,
  StartReplicaRequest,
} from "@thaw/node-agent-client";
import { type Logger } from "pino";
import { z } from "zod";
import { AgentError } from "../agent-error.ts";
import { type HostAgent } from "../host/host-agent.ts";
import { type AgentMetrics } from "../metrics.ts";
import { type SimCloud, SimCloudLaunchRequest } from "../sim/sim-cloud.ts";
import { errorBody, parseBody, readJsonBody, sendJson } from "./http-json.ts";

// The agent's HTTP API for the scheduler (node:http, one small router).
//
//   GET    /healthz                               process health (no auth)
//   GET    /metrics                               Prometheus (no auth)
//   GET    /hosts/{name}/healthz                  one host's health (no auth)
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
// one host, /v1/… (and /healthz) address it directly. Host routes need that host's own
// node credential as a bearer token.

export interface AgentServerOptions {
  hosts: ReadonlyMap<string, HostAgent>;
  log: Logger;
  metrics: AgentMetrics;
  /** True once shutdown began: starts are refused with 503. */
  isDraining: () => boolean;
  /** The sim cloud this process runs, if any (THAW_SIM_CLOUD_TOKEN). */
  simCloud?: SimCloud;
}

const ReplicaId = z.uuid({ message: "expected a replica id (UUID)" });

type HostHandler = (
  host: HostAgent,
  request: IncomingMessage,
  params: string[],
) => Promise<[number, unknown]>;

interface HostRoute {
  method: string;
  pattern: RegExp;
  label: string;
  handle: HostHandler;
}

const HOST_ROUTES: HostRoute[] = [
  {
    method: "POST",
    pattern: /^\/v1\/replicas$/,
    label: "POST /v1/replicas",
    handle: async (host, request) => {
      const body = await requireBody(request);
      return [202, host.startReplica(parseBody(StartReplicaRequest, body))];
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/replicas\/([^/]+)\/park$/,
    label: "POST /v1/replicas/{id}/park",
    handle: async (host, request, [id = ""]) => {
      const replicaId = parseParam(id);
      const body = (await readJsonBody(request)) ?? {};
      if (typeof body === "object" && body !== null && !Array.isArray(body)) {
        const given = (body as { replicaId?: unknown }).replicaId;
        if (given !== undefined && given !== replicaId) {
          throw new AgentError(
            400,
            "invalid_request",
            "replicaId: does not match the replica in the URL",
            "replicaId",
          );
        }
      }
      const parsed = parseBody(ParkReplicaRequest, { ...body, replicaId });
      return [200, await host.parkReplica(parsed)];
    },
  },
  {
    method: "DELETE",
    pattern: /^\/v1\/replicas\/([^/]+)$/,
    label: "DELETE /v1/replicas/{id}",
    handle: async (host, _request, [id = ""]) => [200, await host.stopReplica(parseParam(id))],
  },
  {
    method: "POST",
    pattern: /^\/v1\/snapshots$/,
    label: "POST /v1/snapshots",
    handle: async (host, request) => {
      const body = await requireBody(request);
      return [200, await host.captureSnapshot(parseBody(CaptureSnapshotRequest, body))];
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/inventory$/,
    label: "GET /v1/inventory",
    handle: async (host) => [200, await host.inventory()],
  },
];

export function createAgentServer(options: AgentServerOptions): Server {
  const server = createServer((request, response) => {
    void handle(options, request, response);
  });
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

    if (path === "/metrics" || path === "/healthz") {
      label = `${method} ${path}`;
      allowMethods(method, ["GET"]);
      if (path === "/metrics") {
        const text = await options.metrics.registry.metrics();
        response.writeHead(200, { "content-type": options.metrics.registry.contentType });
        response.end(text);
        return;
      }
      const only = options.hosts.size === 1 ? [...options.hosts.values()][0] : undefined;
      sendJson(response, 200, {
        status: options.isDraining() ? "draining" : "ok",
        hosts: options.hosts.size,
        ...(only ? { joined: only.credential !== undefined } : {}),
      });
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
          cloud.launch(parseBody(SimCloudLaunchRequest, await requireBody(request))),
        );
      else sendJson(response, 200, await cloud.terminate(decodePart(id ?? "", "instanceId")));
      return;
    }

    let host: HostAgent | undefined;
    let rest = path;
    const hostPath = /^\/hosts\/([^/]+)(\/.*)?$/.exec(path);
    if (hostPath) {
      const name = decodePart(hostPath[1] ?? "", "host");
      host = options.hosts.get(name);
      if (!host)
        throw new AgentError(
          404,
          "unknown_host",
          `this agent serves no host named '${name}'`,
          "host",
        );
      rest = hostPath[2] ?? "/";
    } else if (path.startsWith("/v1/")) {
      if (options.hosts.size !== 1) {
        throw new AgentError(
          404,
          "host_required",
          `this agent serves ${options.hosts.size} hosts: address one as /hosts/{name}${path}`,
          "host",
        );
      }
      host = [...options.hosts.values()][0];
    }
    if (!host) throw new AgentError(404, "not_found", `no route for ${method} ${path}`);

    if (rest === "/healthz") {
      label = `${method} /hosts/{name}/healthz`;
      allowMethods(method, ["GET"]);
      sendJson(response, 200, {
        status: host.isDraining ? "draining" : "ok",
        joined: host.credential !== undefined,
      });
      return;
    }
    const matches = HOST_ROUTES.map((route) => ({ route, match: route.pattern.exec(rest) })).filter(
      (m) => m.match,
    );
    if (matches.length === 0)
      throw new AgentError(404, "not_found", `no route for ${method} ${path}`);
    const found = matches.find((m) => m.route.method === method);
    if (!found)
      allowMethods(
        method,
        matches.map((m) => m.route.method),
      );
    const { route, match } = found!;
    label = route.label;
    authenticate(host, request);
    const [status, body] = await route.handle(host, request, match!.slice(1));
    sendJson(response, status, body);
  } catch (error) {
    if (error instanceof AgentError) {
      const headers: Record<string, string> = {};
      if (error.status === 401) headers["www-authenticate"] = 'Bearer realm="thaw-agent"';
      if (error.status === 503) headers["retry-after"] = "5";
      if (error.status === 405)
        headers.allow = (error.details?.allow as string[] | undefined)?.join(", ") ?? "";
      sendJson(response, error.status, errorBody(error), headers);
    } else {
      options.log.error(
        { err: error, method: request.method, url: request.url },
        "agent API request failed",
      );
      sendJson(response, 500, {
        error: {
          code: "internal",
          message: error instanceof Error ? error.message : String(error),
        },
      });
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
      405,
      "method_not_allowed",
      `${method} is not allowed here; use ${allowed.join(" or ")}`,
      undefined,
      {
        allow: allowed,
      },
    );
  }
}

/** The bearer token must be this host's credential: both sides hashed, compared in constant time. */
function authenticate(host: HostAgent, request: IncomingMessage): void {
  const header = request.headers.authorization ?? "";
  const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  if (!token)
    throw new AgentError(401, "unauthorized", "missing bearer credential", "authorization");
  const expected = host.credentialDigest;
  if (!expected)
    throw new AgentError(
      503,
      "not_joined",
      `host ${host.name} has not joined the control plane yet`,
    );
  const presented = createHash("sha256").update(token).digest();
  if (!timingSafeEqual(presented, expected)) {
    throw new AgentError(401, "unauthorized", "the credential is not this node's", "authorization");
  }
}

async function requireBody(request: IncomingMessage): Promise<unknown> {
  const body = await readJsonBody(request);
  if (body === undefined)
    throw new AgentError(400, "invalid_request", "body: expected a JSON object", "body");
  return body;
}

function parseParam(id: string): string {
  const parsed = ReplicaId.safeParse(decodePart(id, "replicaId"));
  if (!parsed.success)
    throw new AgentError(
      400,
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
    throw new AgentError(400, "invalid_request", `${field}: not a valid URL path segment`, field);
  }
}
