import type { KeyObject } from "node:crypto";
import {
  AGENT_ROUTES,
  AgentErrorBody,
  AgentHealth,
  AgentInventory,
  type AgentClientErrorCode,
  type AgentErrorCode,
  type AgentRouteName,
  type CaptureSnapshotRequestInput,
  CaptureSnapshotResponse,
  type ParkReplicaRequestInput,
  ParkReplicaResponse,
  type StartReplicaRequestInput,
  StartReplicaResponse,
  StopReplicaResponse,
  agentPath,
} from "@thaw/protocol";
import { type z } from "zod";
import { signAgentCall } from "./agent-call-signature.ts";
import { CertificatePinError, type PinnedFetch, keepAliveFetch } from "./keep-alive-fetch.ts";

// Scheduler → agent: the scheduler's typed client of the agent's HTTP API (its routes,
// requests, answers and error codes are @thaw/protocol's; apps/agent serves them). The base
// URL is the node's `agentUrl` from its join request: for a host that runs alone it is the
// agent's origin (https://10.0.3.7:7070); a sim fleet serves many
// hosts from one port and gives each a base of its own (https://127.0.0.1:7070/hosts/<name>).
// Every call goes over https to the certificate the agent pinned at join, and is signed with
// the scheduler's key for that node (agent-call-signature.ts); the node's own credential is
// never sent to an agent.

/** A non-2xx answer (or no answer) from an agent. */
export class AgentApiError extends Error {
  override readonly name = "AgentApiError";
  constructor(
    /** 0 when no HTTP answer arrived (connection refused, timeout). */
    readonly status: number,
    /**
     * What the agent answered (one of the protocol's AGENT_ERRORS when the far end is an
     * agent; `http_<status>` when the answer named none), or the client's own
     * AGENT_CLIENT_ERROR_CODES when no protocol answer came.
     */
    readonly code: string,
    message: string,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Worth another attempt: no answer, or a gateway / overload answer. A draining agent is not. */
  get retryable(): boolean {
    // Another certificate at the node's address is not a blip: it stays until the node joins again.
    if (this.status === 0)
      return this.code !== ("certificate_mismatch" satisfies AgentClientErrorCode);
    if (this.status === 503) return this.code !== ("shutting_down" satisfies AgentErrorCode);
    return this.status === 429 || this.status === 502 || this.status === 504;
  }
}

export interface AgentClientOptions {
  /** The node's `agentUrl` (https). */
  baseUrl: string;
  /** The node the calls are for: part of every signature, so no other agent accepts them. */
  nodeId: string;
  /** The scheduler's Ed25519 key (THAW_AGENT_CALL_KEY). */
  signingKey: KeyObject;
  /**
   * SHA-256 of the agent's certificate, pinned at join (or how to read it now: the node may
   * have joined again with another). No pin: the call is refused, never sent unpinned.
   */
  certSha256: string | (() => Promise<string | null | undefined>);
  /** Per-attempt timeout of the quick calls (start acknowledges at once). */
  timeoutMs?: number;
  /** Per-attempt timeout of captureSnapshot, which answers when the checkpoint is written. */
  captureTimeoutMs?: number;
  /**
   * Per-attempt timeout of stopReplica, which answers once the task is gone: SIGTERM, the
   * agent's grace period (10 s by default), then SIGKILL. Shorter than that, a stop of an
   * engine that ignores SIGTERM would time out and be sent again while the first still runs.
   */
  stopTimeoutMs?: number;
  /** Extra attempts after a retryable failure (every call of this API is idempotent). */
  retries?: number;
  /** First retry delay; doubles per attempt, with jitter. */
  retryBaseMs?: number;
  /** Must honour `certSha256` (keepAliveFetch does); the answer's pin is checked again. */
  fetchImpl?: PinnedFetch;
}

/** One pool for every client that is given none. */
let defaultFetch: PinnedFetch | undefined;

/**
 * The scheduler's client for one node's agent. Every call of the agent API is idempotent —
 * start by (replica, cold start), stop and park by replica, capture by snapshot id — so each
 * is retried after a timeout or a gateway error; answers that say no (4xx) never are.
 */
export class AgentClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly captureTimeoutMs: number;
  private readonly stopTimeoutMs: number;
  private readonly retries: number;
  private readonly retryBaseMs: number;
  private readonly fetchImpl: PinnedFetch;

  constructor(private readonly options: AgentClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.captureTimeoutMs = options.captureTimeoutMs ?? 15 * 60_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 60_000;
    this.retries = options.retries ?? 2;
    this.retryBaseMs = options.retryBaseMs ?? 200;
    this.fetchImpl = options.fetchImpl ?? (defaultFetch ??= keepAliveFetch());
  }

  startReplica(request: StartReplicaRequestInput): Promise<StartReplicaResponse> {
    return this.call("startReplica", {}, StartReplicaResponse, { body: request });
  }

  parkReplica(request: ParkReplicaRequestInput): Promise<ParkReplicaResponse> {
    return this.call("parkReplica", { id: request.replicaId }, ParkReplicaResponse, {
      body: request,
    });
  }

  stopReplica(replicaId: string): Promise<StopReplicaResponse> {
    return this.call("stopReplica", { id: replicaId }, StopReplicaResponse, {
      timeoutMs: this.stopTimeoutMs,
    });
  }

  captureSnapshot(request: CaptureSnapshotRequestInput): Promise<CaptureSnapshotResponse> {
    return this.call("captureSnapshot", {}, CaptureSnapshotResponse, {
      body: request,
      timeoutMs: this.captureTimeoutMs,
    });
  }

  inventory(): Promise<AgentInventory> {
    return this.call("inventory", {}, AgentInventory);
  }

  health(): Promise<AgentHealth> {
    return this.call("health", {}, AgentHealth);
  }

  private async call<T extends z.ZodType>(
    route: AgentRouteName,
    params: Record<string, string>,
    schema: T,
    extra: { body?: unknown; timeoutMs?: number } = {},
  ): Promise<z.infer<T>> {
    const { method } = AGENT_ROUTES[route];
    const path = agentPath(route, params);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(method, path, schema, extra);
      } catch (error) {
        if (!(error instanceof AgentApiError) || !error.retryable || attempt >= this.retries)
          throw error;
        const ceiling = this.retryBaseMs * 2 ** attempt;
        await new Promise((resolve) =>
          setTimeout(resolve, ceiling / 2 + (Math.random() * ceiling) / 2),
        );
      }
    }
  }

  private async once<T extends z.ZodType>(
    method: string,
    path: string,
    schema: T,
    extra: { body?: unknown; timeoutMs?: number },
  ): Promise<z.infer<T>> {
    const url = new URL(`${this.baseUrl}${path}`);
    const body = extra.body === undefined ? "" : JSON.stringify(extra.body);
    let response: Awaited<ReturnType<PinnedFetch>>;
    let text: string;
    let certSha256: string | null | undefined;
    try {
      if (url.protocol !== "https:")
        throw new AgentApiError(
          421,
          "agent_address_refused" satisfies AgentClientErrorCode,
          `${method} ${url.origin}: agents are called over https only`,
        );
      const pin = this.options.certSha256;
      certSha256 = typeof pin === "string" ? pin : await pin();
      if (!certSha256)
        throw new AgentApiError(
          421,
          "agent_address_refused" satisfies AgentClientErrorCode,
          `${method} ${url.origin}: the node has no pinned certificate (its agent must join again)`,
        );
      const headers: Record<string, string> = {
        authorization: signAgentCall(this.options.signingKey, {
          nodeId: this.options.nodeId,
          method,
          path: `${url.pathname}${url.search}`,
          body,
        }),
      };
      if (extra.body !== undefined) headers["content-type"] = "application/json";
      response = await this.fetchImpl(url, {
        method,
        headers,
        ...(extra.body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(extra.timeoutMs ?? this.timeoutMs),
        certSha256,
      });
      text = await response.text();
    } catch (error) {
      if (error instanceof AgentApiError) throw error;
      if (
        error instanceof Error &&
        (error instanceof CertificatePinError || error.cause instanceof CertificatePinError)
      )
        throw new AgentApiError(
          0,
          "certificate_mismatch" satisfies AgentClientErrorCode,
          `${method} ${this.baseUrl}${path}: ${(error instanceof CertificatePinError ? error : (error.cause as Error)).message}`,
          undefined,
          { cause: error },
        );
      const reason = error instanceof Error ? error.message : String(error);
      throw new AgentApiError(
        0,
        "unreachable" satisfies AgentClientErrorCode,
        `${method} ${this.baseUrl}${path}: ${reason}`,
        undefined,
        {
          cause: error,
        },
      );
    }
    // A fetch that ignored the pin must not be trusted with the answer either.
    if (response.peerCertSha256 !== certSha256.toLowerCase())
      throw new AgentApiError(
        0,
        "certificate_mismatch" satisfies AgentClientErrorCode,
        `${method} ${path}: the answer did not come over the pinned certificate`,
      );
    if (!response.ok) {
      const parsed = AgentErrorBody.safeParse(safeJson(text));
      const error = parsed.success ? parsed.data.error : undefined;
      throw new AgentApiError(
        response.status,
        error?.code ?? `http_${response.status}`,
        `${method} ${path}: agent answered ${response.status}: ${error?.message ?? text.slice(0, 300)}`,
        error?.details?.field,
      );
    }
    // A success that is not the protocol's answer came from something that is not an agent:
    // an error of this call (not retried), never an exception that retries the whole job.
    const answer = schema.safeParse(safeJson(text));
    if (!answer.success)
      throw new AgentApiError(
        response.status,
        "invalid_answer" satisfies AgentClientErrorCode,
        `${method} ${path}: agent answered ${response.status} outside the protocol: ${answer.error.issues[0]?.message ?? "invalid"}`,
      );
    return answer.data;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
