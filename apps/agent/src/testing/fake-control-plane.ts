import { randomBytes, randomUUID } from "node:crypto";
import { type IncomingMessage, type Server, createServer } from "node:http";
import { type AddressInfo } from "node:net";
import {
  AGENT_API_PREFIX,
  type ColdStartOutcomeReport,
  HeartbeatRequest,
  JoinRequest,
  type PhaseEventReport,
  TelemetryBatch,
} from "@thaw/node-agent-client";

// A stand-in for the control plane's agent API (join, heartbeat, telemetry) that only
// validates, counts and remembers: for unit tests and the sim-fleet benchmark, where the
// agent side is measured, not Postgres. Telemetry is idempotent on (cold start, sequence)
// like the real ingest, and it can be told to be down.

export interface FakeNode {
  nodeId: string;
  name: string;
  credential: string;
  agentUrl: string | undefined;
  joinToken: string;
  instanceId: string | undefined;
  zone: string | undefined;
}

export class FakeControlPlane {
  readonly nodes = new Map<string, FakeNode>();
  private readonly byCredential = new Map<string, FakeNode>();
  readonly events = new Map<string, PhaseEventReport[]>();
  readonly outcomes = new Map<string, ColdStartOutcomeReport>();
  readonly counts = {
    joins: 0,
    heartbeats: 0,
    telemetryBatches: 0,
    events: 0,
    duplicates: 0,
    outcomes: 0,
  };
  /** Answer every telemetry call with this status (e.g. 503) instead of storing it. */
  telemetryStatus: number | undefined;
  /** Called for every stored outcome (the benchmark waits on them). */
  onOutcome: ((outcome: ColdStartOutcomeReport, node: FakeNode) => void) | undefined;
  /** Called for every heartbeat, with the time it arrived. */
  onHeartbeat: ((node: FakeNode) => void) | undefined;
  private server: Server | undefined;
  url = "";

  async start(port = 0): Promise<string> {
    this.server = createServer((request, response) => {
      this.handle(request)
        .then(([status, body]) => {
          const text = JSON.stringify(body);
          response.writeHead(status, {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(text),
          });
          response.end(text);
        })
        .catch((error: unknown) => {
          response.writeHead(500);
          response.end(String(error));
        });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  nodeNamed(name: string): FakeNode | undefined {
    return [...this.nodes.values()].find((n) => n.name === name);
  }

  private async handle(request: IncomingMessage): Promise<[number, unknown]> {
    const chunks: Buffer[] = [];
    for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
    const body: unknown = chunks.length
      ? JSON.parse(Buffer.concat(chunks).toString("utf8"))
      : undefined;
    const path = (request.url ?? "").replace(AGENT_API_PREFIX, "");
    if (path === "/join") {
      const join = JoinRequest.parse(body);
      this.counts.joins++;
      const node: FakeNode = {
        nodeId: randomUUID(),
        name: join.name,
        credential: `thawnode_${randomBytes(24).toString("base64url")}`,
        agentUrl: join.agentUrl,
        joinToken: join.joinToken,
        instanceId: join.instanceId,
        zone: join.zone,
      };
      this.nodes.set(node.nodeId, node);
      this.byCredential.set(node.credential, node);
      return [
        200,
        { nodeId: node.nodeId, credential: node.credential, heartbeatIntervalSeconds: 5 },
      ];
    }
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    const node = token ? this.byCredential.get(token) : undefined;
    if (!node) return [401, { error: { code: "UNAUTHORIZED", message: "unknown credential" } }];
    if (path === "/heartbeat") {
      HeartbeatRequest.parse(body);
      this.counts.heartbeats++;
      this.onHeartbeat?.(node);
      return [200, { nodeId: node.nodeId, state: "ready", heartbeatIntervalSeconds: 5 }];
    }
    if (path === "/telemetry") {
      if (this.telemetryStatus !== undefined)
        return [this.telemetryStatus, { error: { code: "DOWN", message: "down" } }];
      const batch = TelemetryBatch.parse(body);
      this.counts.telemetryBatches++;
      let accepted = 0;
      let duplicates = 0;
      for (const event of batch.events) {
        const list = this.events.get(event.coldStartId) ?? [];
        if (list.some((e) => e.sequence === event.sequence)) {
          duplicates++;
          continue;
        }
        list.push(event);
        this.events.set(event.coldStartId, list);
        accepted++;
      }
      this.counts.events += accepted;
      this.counts.duplicates += duplicates;
      for (const outcome of batch.outcomes) {
        if (this.outcomes.has(outcome.coldStartId)) continue;
        this.outcomes.set(outcome.coldStartId, outcome);
        this.counts.outcomes++;
        this.onOutcome?.(outcome, node);
      }
      return [200, { accepted, duplicates }];
    }
    return [404, { error: { code: "NOT_FOUND", message: path } }];
  }
}
