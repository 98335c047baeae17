import {
  CONTROL_PLANE_PATHS,
  CredentialResponse,
  HeartbeatResponse,
  JoinResponse,
  TelemetryResponse,
  type HeartbeatRequestInput,
  type JoinRequest,
  type TelemetryBatchInput,
} from "@thaw/protocol";
import type { z } from "zod";

export interface ControlPlaneClientOptions {
  baseUrl: string;
  /** Per-request timeout. */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/** Thrown for a non-2xx answer; `status` lets callers tell retryable from fatal. */
export class ControlPlaneError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`control plane answered ${status}: ${body.slice(0, 300)}`);
    this.name = "ControlPlaneError";
  }
  get retryable(): boolean {
    return this.status >= 500 || this.status === 429 || this.status === 408;
  }
}

/** The agent's typed client for the control plane's agent API. */
export class ControlPlaneClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ControlPlaneClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/$/, "");
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetchImpl = options.fetchImpl ?? fetch;
  }

  join(request: JoinRequest): Promise<JoinResponse> {
    return this.post(CONTROL_PLANE_PATHS.join, request, JoinResponse);
  }

  heartbeat(credential: string, request: HeartbeatRequestInput): Promise<HeartbeatResponse> {
    return this.post(CONTROL_PLANE_PATHS.heartbeat, request, HeartbeatResponse, credential);
  }

  /** A new credential for this node (the current one stays valid until the new one is used). */
  renewCredential(credential: string): Promise<CredentialResponse> {
    return this.post(CONTROL_PLANE_PATHS.credential, {}, CredentialResponse, credential);
  }

  /** Idempotent on (coldStartId, sequence): after a timeout, resend the same batch. */
  sendTelemetry(credential: string, batch: TelemetryBatchInput): Promise<TelemetryResponse> {
    return this.post(CONTROL_PLANE_PATHS.telemetry, batch, TelemetryResponse, credential);
  }

  private async post<T extends z.ZodType>(
    path: string,
    body: unknown,
    schema: T,
    credential?: string,
  ): Promise<z.infer<T>> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (credential) headers.authorization = `Bearer ${credential}`;
    const response = await this.fetchImpl(`${this.baseUrl}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw new ControlPlaneError(response.status, text);
    return schema.parse(JSON.parse(text));
  }
}
