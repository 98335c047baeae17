import { randomBytes, randomUUID } from "node:crypto";
import { type IncomingMessage, type Server, createServer } from "node:http";
import { type AddressInfo } from "node:net";
import {
  AgentClient,
  type AgentClientOptions,
  generateAgentCallKeyPair,
  parseAgentCallPrivateKey,
} from "@thaw/node-agent-client";
import {
  CONTROL_PLANE_PATHS,
  type ColdStartOutcomeReport,
  HeartbeatRequest,
  type HostFigures,
  JoinRequest,
  type KernelCacheCapturedReport,
  type PhaseEventReport,
  TelemetryBatch,
} from "@thaw/protocol";

// A stand-in for the control plane's agent API (join, heartbeat, credential, telemetry with
// its captured kernel caches) that only validates, counts and remembers: for unit tests and
// the sim-fleet benchmark, where the agent side is measured, not Postgres. Telemetry is
// idempotent on (cold start, sequence) like the real ingest, and it can be told to be down.
// It plays the scheduler too: it holds the key pair whose public half its joins answer, and
// makes agent clients that sign with it.

export interface FakeNode {
  nodeId: string;
  name: string;
  credential: string;
  agentUrl: string | undefined;
  agentCertSha256: string | undefined;
  joinToken: string;
  instanceId: string | undefined;
  zone: string | undefined;
  /** Heartbeat answers ask for a new credential while set. */
  rotate: boolean;
  /** Issued by POST /credential, not used yet. */
  pendingCredential?: string;
  /** The credential the join presented as proof of being a node that joined before. */
  presentedCredential: string | undefined;
  /** What the host reported at join. */
  figures?: HostFigures;
}

export class FakeControlPlane {
  readonly nodes = new Map<string, FakeNode>();
  private readonly byCredential = new Map<string, FakeNode>();
  readonly events = new Map<string, PhaseEventReport[]>();
  readonly outcomes = new Map<string, ColdStartOutcomeReport>();
  /** Captured kernel caches, by the cold start that captured them. */
  readonly kernelCaches = new Map<string, KernelCacheCapturedReport>();
  readonly counts = {
    joins: 0,
    heartbeats: 0,
    telemetryBatches: 0,
    events: 0,
    duplicates: 0,
    outcomes: 0,
    kernelCaches: 0,
  };
  /** Answer every telemetry call with this status (e.g. 503) instead of storing it. */
  telemetryStatus: number | undefined;
  /** Called for every stored outcome (the benchmark waits on them). */
  onOutcome: ((outcome: ColdStartOutcomeReport, node: FakeNode) => void) | undefined;
  /** Called for every stored kernel-cache report. */
  onKernelCache: ((report: KernelCacheCapturedReport, node: FakeNode) => void) | undefined;
  /** Called for every heartbeat, with the time it arrived. */
  onHeartbeat: ((node: FakeNode) => void) | undefined;
  private server: Server | undefined;
  url = "";
  /** The scheduler's key pair: joins answer the public key, agentClient signs with the private. */
  readonly callKeys = generateAgentCallKeyPair();

  /** A scheduler's client for a joined host: signed with callKeys, pinned to its certificate. */
  agentClient(host: string, extra: Partial<AgentClientOptions> = {}): AgentClient {
    const node = this.nodeNamed(host);
    if (!node?.agentUrl || !node.agentCertSha256) throw new Error(`${host} did not join`);
    return new AgentClient({
      baseUrl: node.agentUrl,
      nodeId: node.nodeId,
      signingKey: parseAgentCallPrivateKey(this.callKeys.privateKey),
      certSha256: node.agentCertSha256,
      retries: 0,
      ...extra,
    });
  }

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
    const path = request.url ?? "";
    if (path === CONTROL_PLANE_PATHS.join) {
      const join = JoinRequest.parse(body);
      this.counts.joins++;
      const node: FakeNode = {
        nodeId: randomUUID(),
        name: join.name,
        credential: newCredential(),
        agentUrl: join.agentUrl,
        agentCertSha256: join.agentCertSha256,
        joinToken: join.joinToken,
        instanceId: join.instanceId,
        zone: join.zone,
        rotate: false,
        presentedCredential: join.nodeCredential,
        figures: join.figures,
      };
      this.nodes.set(node.nodeId, node);
      this.byCredential.set(node.credential, node);
      return [
        200,
        {
          nodeId: node.nodeId,
          credential: node.credential,
          heartbeatIntervalSeconds: 5,
          agentCallPublicKey: this.callKeys.publicKey,
        },
      ];
    }
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    const node = token ? this.byCredential.get(token) : undefined;
    if (!token || !node)
      return [401, { error: { code: "UNAUTHORIZED", message: "unknown credential" } }];
    if (token === node.pendingCredential) {
      // The rotated credential's first use retires the old one.
      this.byCredential.delete(node.credential);
      node.credential = token;
      node.pendingCredential = undefined;
      node.rotate = false;
    }
    if (path === CONTROL_PLANE_PATHS.heartbeat) {
      HeartbeatRequest.parse(body);
      this.counts.heartbeats++;
      this.onHeartbeat?.(node);
      return [
        200,
        {
          nodeId: node.nodeId,
          state: "ready",
          heartbeatIntervalSeconds: 5,
          rotateCredential: node.rotate,
        },
      ];
    }
    if (path === CONTROL_PLANE_PATHS.credential) {
      if (node.pendingCredential) this.byCredential.delete(node.pendingCredential);
      node.pendingCredential = newCredential();
      this.byCredential.set(node.pendingCredential, node);
      return [200, { nodeId: node.nodeId, credential: node.pendingCredential }];
    }
    if (path === CONTROL_PLANE_PATHS.telemetry) {
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
      for (const report of batch.kernelCaches) {
        if (this.kernelCaches.has(report.coldStartId)) continue;
        this.kernelCaches.set(report.coldStartId, report);
        this.counts.kernelCaches++;
        this.onKernelCache?.(report, node);
      }
      return [200, { accepted, duplicates }];
    }
    return [404, { error: { code: "NOT_FOUND", message: path } }];
  }
}

function newCredential(): string {
  return `thawnode_${randomBytes(6).toString("hex")}_${randomBytes(24).toString("base64url")}`;
}
