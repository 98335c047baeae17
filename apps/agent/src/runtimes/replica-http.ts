import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

// HTTP to the engine inside a replica, always on the host's loopback (replicas run with host
// networking): the readiness probe, the warmup requests and the engine's sleep/wake calls.

export interface HttpAnswer {
  status: number;
  body: string;
}

export interface ReplicaHttpOptions {
  host?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export function replicaRequest(
  port: number,
  path: string,
  init: { method: "GET" | "POST"; body?: string },
  options: ReplicaHttpOptions,
): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const body = init.body;
    const request = http.request(
      {
        host: options.host ?? "127.0.0.1",
        port,
        path,
        method: init.method,
        agent: false,
        timeout: options.timeoutMs,
        headers:
          body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          if (size < 64 * 1024) chunks.push(chunk);
          size += chunk.length;
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("timeout", () =>
      request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
    );
    request.on("error", reject);
    request.end(body);
  });
}

export interface ProbeResult {
  status: number;
  attempts: number;
  /** Seconds from the probe's start to the first HTTP answer of any status (server listening). */
  firstAnswerSeconds: number | undefined;
  seconds: number;
}

export interface ProbeOptions {
  port: number;
  path: string;
  timeoutSeconds: number;
  signal?: AbortSignal;
  /** Called every ~second while waiting: throw to give up (e.g. the container exited). */
  onWaiting?: () => Promise<void>;
  /** First retry delay; grows ×1.5 up to maxIntervalMs. */
  initialIntervalMs?: number;
  maxIntervalMs?: number;
}

/** Polls GET <path> until it answers 200. Connection refused and non-200 answers are retried. */
export async function probeUntilReady(options: ProbeOptions): Promise<ProbeResult> {
  const t0 = performance.now();
  const deadline = t0 + options.timeoutSeconds * 1000;
  let interval = options.initialIntervalMs ?? 10;
  const maxInterval = options.maxIntervalMs ?? 250;
  let attempts = 0;
  let firstAnswerSeconds: number | undefined;
  let lastProblem: string;
  let nextWaitingCheck = t0 + 1000;
  for (;;) {
    options.signal?.throwIfAborted();
    attempts++;
    const remaining = deadline - performance.now();
    try {
      const answer = await replicaRequest(
        options.port,
        options.path,
        { method: "GET" },
        {
          timeoutMs: Math.max(50, Math.min(2000, remaining)),
          ...(options.signal ? { signal: options.signal } : {}),
        },
      );
      firstAnswerSeconds ??= (performance.now() - t0) / 1000;
      if (answer.status === 200) {
        return {
          status: 200,
          attempts,
          firstAnswerSeconds,
          seconds: (performance.now() - t0) / 1000,
        };
      }
      lastProblem = `answered ${answer.status}`;
    } catch (error) {
      options.signal?.throwIfAborted();
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    const now = performance.now();
    if (now >= deadline) {
      throw new Error(
        `readiness probe GET http://127.0.0.1:${options.port}${options.path} did not answer 200 within ${options.timeoutSeconds} s (${attempts} attempts; last: ${lastProblem})`,
      );
    }
    if (options.onWaiting && now >= nextWaitingCheck) {
      await options.onWaiting();
      nextWaitingCheck = performance.now() + 1000;
    }
    await sleep(Math.min(interval, Math.max(0, deadline - now)), undefined, {
      ...(options.signal ? { signal: options.signal } : {}),
    });
    interval = Math.min(maxInterval, interval * 1.5);
  }
}

/** An engine call that must succeed (2xx), e.g. vLLM's POST /wake_up. */
export async function engineCall(
  port: number,
  call: { path: string; body?: string },
  options: ReplicaHttpOptions & { what: string },
): Promise<number> {
  const t0 = performance.now();
  let answer: HttpAnswer;
  try {
    answer = await replicaRequest(
      port,
      call.path,
      { method: "POST", ...(call.body === undefined ? {} : { body: call.body }) },
      options,
    );
  } catch (error) {
    throw new Error(
      `${options.what}: POST http://127.0.0.1:${port}${call.path} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(
      `${options.what}: POST http://127.0.0.1:${port}${call.path} answered ${answer.status}: ${answer.body.slice(0, 500)}`,
    );
  }
  return (performance.now() - t0) / 1000;
}
