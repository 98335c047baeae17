import { unwrap, type Schemas } from "../api.ts";
import { emit, table } from "../output.ts";
import { apiContext, type GlobalOptions } from "./context.ts";

const bytesGB = (n: number) => `${(n / 1e9).toFixed(1)} GB`;
const WAIT_PRICE_SOURCE = {
  endpoint: "the endpoint's own",
  org: "the org's default",
  platform: "the platform's default",
} as const;

export async function listEndpoints(options: GlobalOptions): Promise<void> {
  const { api, target, json } = apiContext(options);
  const data = await unwrap(api.GET("/api/v1/endpoints"), target.url);
  emit(json, data, () =>
    data.endpoints.length === 0
      ? "No endpoints yet: create one with 'thaw apply -f endpoint.yaml'."
      : table([
          ["SLUG", "GPU", "REPLICAS (min/desired/max)", "VERSION", "IMAGE"],
          ...data.endpoints.map((e) => [
            e.slug,
            `${e.gpuCount}× ${e.gpuType}`,
            `${e.minReplicas}/${e.desiredReplicas}/${e.maxReplicas}`,
            e.activeDeployment ? `v${e.activeDeployment.version}` : "-",
            e.activeDeployment?.imageRef ?? "-",
          ]),
        ]),
  );
}

export function describeEndpoint(e: Schemas["Endpoint"]): string {
  const d = e.activeDeployment;
  return [
    `${e.slug} — ${e.name}`,
    `  GPU:         ${e.gpuCount}× ${e.gpuType}`,
    `  replicas:    min ${e.minReplicas}, desired ${e.desiredReplicas}, max ${e.maxReplicas}`,
    `  start paths: ${e.allowedPaths.join(", ")} (objective ${e.objective})`,
    `  scale:       ${e.targetConcurrency} requests per replica, to zero after ${e.scaleToZeroIdleSeconds}s idle`,
    e.effectiveGpuSecondsPerWaitSecond.value === null
      ? "  wait price:  none (the platform's default: a 10-minute keep-alive's idle time, spent where it saves the most wait)"
      : `  wait price:  ${e.effectiveGpuSecondsPerWaitSecond.value} GPU-seconds per second of wait (${WAIT_PRICE_SOURCE[e.effectiveGpuSecondsPerWaitSecond.source]})`,
    d
      ? `  deployment:  v${d.version} ${d.imageRef} (${bytesGB(d.imageBytes)}), ${d.modelSource} (${bytesGB(d.modelBytes)}), ${d.engine}${d.estargzImageRef ? `, eStargz ${d.estargzImageRef}` : ""}`
      : "  deployment:  none active",
  ].join("\n");
}

export async function getEndpoint(endpoint: string, options: GlobalOptions): Promise<void> {
  const { api, target, json } = apiContext(options);
  const data = await unwrap(
    api.GET("/api/v1/endpoints/{endpoint}", { params: { path: { endpoint } } }),
    target.url,
  );
  emit(json, data, () => describeEndpoint(data));
}

export async function deleteEndpoint(endpoint: string, options: GlobalOptions): Promise<void> {
  const { api, target, json } = apiContext(options);
  const data = await unwrap(
    api.DELETE("/api/v1/endpoints/{endpoint}", { params: { path: { endpoint } } }),
    target.url,
  );
  emit(json, data, () => `Deleted ${data.slug}: its replicas drain, its history stays.`);
}

export async function scaleEndpoint(
  endpoint: string,
  replicas: number,
  options: GlobalOptions,
): Promise<void> {
  const { api, target, json } = apiContext(options);
  const data = await unwrap(
    api.PUT("/api/v1/endpoints/{endpoint}/replicas", {
      params: {
        path: { endpoint },
        // A retry of this very command is answered, not applied twice.
        header: { "idempotency-key": `thaw-cli-${crypto.randomUUID()}` },
      },
      body: { replicas },
    }),
    target.url,
  );
  emit(json, data, () =>
    data.previousReplicas === data.desiredReplicas
      ? `${data.slug} already wants ${data.desiredReplicas} replicas.`
      : `${data.slug}: desired replicas ${data.previousReplicas} → ${data.desiredReplicas}.`,
  );
}

export async function endpointStatus(endpoint: string, options: GlobalOptions): Promise<void> {
  const { api, target, json } = apiContext(options);
  const s = await unwrap(
    api.GET("/api/v1/endpoints/{endpoint}/status", { params: { path: { endpoint } } }),
    target.url,
  );
  const secs = (v: number | null) => (v === null ? "-" : `${v.toFixed(1)}s`);
  emit(json, s, () =>
    [
      `${s.endpoint.slug}: desired ${s.desiredReplicas} (min ${s.minReplicas}, max ${s.maxReplicas})`,
      `  replicas: ${s.replicas.ready} ready, ${s.replicas.starting} starting, ${s.replicas.pending} pending, ${s.replicas.warm} warm, ${s.replicas.draining} draining, ${s.replicas.failed} failed`,
      `  time to ready: p50 ${secs(s.timeToReadySeconds.p50)}, p95 ${secs(s.timeToReadySeconds.p95)} over ${s.timeToReadySeconds.samples} starts`,
      `  predictions: ${s.predictionCalibration.insideShare === null ? "-" : `${Math.round(s.predictionCalibration.insideShare * 100)}%`} inside p10–p90 over ${s.predictionCalibration.starts} starts (${s.predictionCalibration.verdict})`,
      s.lastColdStart
        ? `  last cold start: ${s.lastColdStart.path}, ${s.lastColdStart.status}, at ${s.lastColdStart.requestedAt}`
        : "  last cold start: none yet",
    ].join("\n"),
  );
}

export async function endpointPredictions(endpoint: string, options: GlobalOptions): Promise<void> {
  const { api, target, json } = apiContext(options);
  const p = await unwrap(
    api.GET("/api/v1/endpoints/{endpoint}/predictions", { params: { path: { endpoint } } }),
    target.url,
  );
  const secs = (v: number | null) => (v === null ? "-" : `${v.toFixed(1)}s`);
  emit(json, p, () =>
    [
      `${p.endpoint.slug}: a start now would take (objective ${p.objective})`,
      table([
        ["PATH", "MEAN", "P90", "NODE", "SAMPLES", "NOTE"],
        ...p.paths.map((x) => [
          x.path,
          x.available ? secs(x.meanSeconds) : "-",
          x.available ? secs(x.p90Seconds) : "-",
          x.nodeName ?? "-",
          String(x.samples),
          x.available ? (x.locality ?? "") : (x.reason ?? "not available"),
        ]),
      ]),
    ].join("\n"),
  );
}
