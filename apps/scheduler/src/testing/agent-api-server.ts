import { TEST_AGENT_NETWORK } from "@thaw/core/testing";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  authenticateNode,
  httpStatusOf,
  ingestTelemetry,
  isAppError,
  joinNode,
  parseInput,
  recordNodeHeartbeat,
  renewNodeCredential,
} from "@thaw/core";
import type { DbClient } from "@thaw/db";
import { CONTROL_PLANE_PATHS, HeartbeatRequest, JoinRequest, TelemetryBatch } from "@thaw/protocol";
import { TEST_AGENT_CALL_KEYS } from "./agent-call-keys.ts";

// The control plane's agent API (join, heartbeat, credential, telemetry) over node:http, calling the same
// core use cases as apps/web's route handlers — so scheduler tests can run real sim agents
// against real Postgres without building Next.js. The `history` work ingest says follows
// (the web route enqueues it) is the `onClosed` hook; live notices have no listener here.

export interface AgentApiServer {
  url: string;
  close(): Promise<void>;
}

export async function startAgentApiServer(opts: {
  db: DbClient;
  /** What joins answer (default: this test file's scheduler key, TEST_AGENT_CALL_KEYS). */
  agentCallPublicKey?: string;
  onClosed?: (coldStartId: string) => Promise<void>;
}): Promise<AgentApiServer> {
  const { db } = opts;
  const routes: Record<string, (body: unknown, credential: string | null) => Promise<unknown>> = {
    [CONTROL_PLANE_PATHS.join]: async (body) =>
      joinNode({
        input: parseInput(JoinRequest, body, "body"),
        db,
        network: TEST_AGENT_NETWORK,
        agentCallPublicKey: opts.agentCallPublicKey ?? TEST_AGENT_CALL_KEYS.publicKey,
      }),
    [CONTROL_PLANE_PATHS.heartbeat]: async (body, credential) => {
      const actor = await authenticateNode({ credential, db });
      return recordNodeHeartbeat({ actor, input: parseInput(HeartbeatRequest, body, "body"), db });
    },
    [CONTROL_PLANE_PATHS.credential]: async (_body, credential) =>
      renewNodeCredential({ actor: await authenticateNode({ credential, db }), db }),
    [CONTROL_PLANE_PATHS.telemetry]: async (body, credential) => {
      const actor = await authenticateNode({ credential, db });
      const { result, followUps } = await ingestTelemetry({
        actor,
        input: parseInput(TelemetryBatch, body, "body"),
        db,
      });
      for (const work of followUps)
        if ("queue" in work && work.queue === "history")
          await opts.onClosed?.(work.payload.coldStartId);
      return result;
    },
  };
  const server: Server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    const route = routes[request.url ?? ""];
    if (!route || request.method !== "POST") return reply(404, { error: { code: "NOT_FOUND" } });
    const credential = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1] ?? null;
    readBody(request)
      .then((text) => route(JSON.parse(text) as unknown, credential))
      .then((body) => reply(200, body))
      .catch((error: unknown) => {
        if (isAppError(error))
          return reply(httpStatusOf(error.code), {
            error: { code: error.code, message: error.message, details: error.details ?? null },
          });
        reply(500, { error: { code: "INTERNAL", message: String(error) } });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
