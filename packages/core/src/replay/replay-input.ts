import { ScenarioEngine, type ScenarioHost, ScenarioLayer } from "../cold-start-model/index.ts";
import { z } from "zod";

// What a replay takes (bench-contracts.md): request arrivals, and a fleet of hosts with the
// endpoints' specs. Pure data and schemas: bench:replay reads them from files
// (apps/scheduler/src/bench/replay/replay-input.ts), the what-if builds them from an
// endpoint's recorded load and its org's nodes (../what-if).

export interface TraceRequest {
  /** Seconds since the trace's first request. */
  at: number;
  endpoint: string;
  /** Service time once a replica is ready. */
  seconds: number;
}

export const EndpointSpec = z
  .object({
    gpuType: z.string(),
    gpus: z.number().int().min(1).max(8),
    concurrency: z.number().int().min(1).max(256),
    image: z
      .object({ layers: z.array(ScenarioLayer).min(1), readFraction: z.number().min(0).max(1) })
      .strict(),
    engine: ScenarioEngine,
    estargz: z.boolean(),
    snapshot: z
      .object({
        bytes: z.number().int().min(1),
        sleepLevel: z.union([z.literal(0), z.literal(1), z.literal(2)]),
      })
      .strict()
      .nullable(),
    minReplicas: z.number().int().min(0),
    maxReplicas: z.number().int().min(1),
  })
  .strict();
export type EndpointSpec = z.infer<typeof EndpointSpec>;

export interface ReplayHost {
  name: string;
  gpuModel: string;
  gpus: number;
  host: z.output<typeof ScenarioHost>;
  /** Host RAM (the instance type's): what sleeping engines may hold. Absent: none sleep here. */
  memoryBytes?: number;
}

export interface ReplayFleet {
  hosts: ReplayHost[];
  endpoint(name: string): EndpointSpec;
}

/** Built-in endpoint defaults: an 8B model on vLLM in a 15 GB image (field notes' figures). */
export const BUILT_IN_ENDPOINT_SPEC: EndpointSpec = {
  gpuType: "A10G",
  gpus: 1,
  concurrency: 8,
  image: {
    layers: [
      { bytes: 15_000_000_000, compression: "gzip-6", content: "weights" },
      { bytes: 7_000_000_000, compression: "gzip-6", content: "code" },
    ],
    readFraction: 0.8,
  },
  engine: {
    weightsBytes: 15_000_000_000,
    loader: "concurrent",
    loaderConcurrency: 16,
    initSeconds: 10,
    compileSeconds: 27,
    graphCaptureSeconds: 34,
    warmupSeconds: 20,
    warmCaches: false,
  },
  estargz: true,
  snapshot: { bytes: 3_400_000_000, sleepLevel: 2 },
  minReplicas: 0,
  maxReplicas: 64,
};
