import { readFileSync } from "node:fs";
import { basename } from "node:path";
import {
  HOST_PROFILES,
  ScenarioHost,
  scenarioHostFromProfile,
  type HostProfile,
} from "@thaw/core/cold-start-model";
import {
  BUILT_IN_ENDPOINT_SPEC,
  EndpointSpec,
  type ReplayFleet,
  type ReplayHost,
  type TraceRequest,
} from "@thaw/core/replay";
import { z } from "zod";

// bench:replay's inputs read from files (bench-contracts.md): a trace of request arrivals and
// a fleet. The types and the engine are @thaw/core/replay's.

export class InputError extends Error {}

/**
 * Service time of an LLM request from its tokens: prefill at 8,000 tokens/s and decode at
 * 40 tokens/s — an 8B model on one A10G/L40S-class GPU with continuous batching. Only the
 * time a replica slot is held matters here; the wait for a ready replica is what is measured.
 */
export function llmServiceSeconds(contextTokens: number, generatedTokens: number): number {
  return contextTokens / 8_000 + generatedTokens / 40;
}

export function parseTrace(
  path: string,
  format: "azure-llm" | "events",
  endpointName?: string,
): TraceRequest[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InputError(`--trace: cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  const header = lines.shift() ?? "";
  const requests: TraceRequest[] = [];
  if (format === "azure-llm") {
    if (!/^TIMESTAMP,ContextTokens,GeneratedTokens$/i.test(header.trim()))
      throw new InputError(`--trace: ${path} is not an azure-llm trace (header '${header}')`);
    const name = endpointName ?? basename(path).replace(/\.[^.]+$/, "");
    let t0: number | undefined;
    for (const [i, line] of lines.entries()) {
      const [stamp = "", context = "", generated = ""] = line.split(",");
      const ms = Date.parse(stamp.replace(" ", "T").replace(/(\.\d{3})\d*/, "$1") + "Z");
      const c = Number(context);
      const g = Number(generated);
      if (!Number.isFinite(ms) || !(c >= 0) || !(g >= 0))
        throw new InputError(`--trace: ${path} line ${i + 2} is malformed: '${line}'`);
      t0 ??= ms;
      requests.push({ at: (ms - t0) / 1000, endpoint: name, seconds: llmServiceSeconds(c, g) });
    }
  } else {
    if (!/^timestamp_s,endpoint,duration_s$/i.test(header.trim()))
      throw new InputError(`--trace: ${path} is not an events trace (header '${header}')`);
    for (const [i, line] of lines.entries()) {
      const [at = "", endpoint = "", seconds = ""] = line.split(",");
      const a = Number(at);
      const s = Number(seconds);
      if (!Number.isFinite(a) || a < 0 || !endpoint || !(s >= 0) || !Number.isFinite(s))
        throw new InputError(`--trace: ${path} line ${i + 2} is malformed: '${line}'`);
      requests.push({ at: a, endpoint, seconds: s });
    }
  }
  if (requests.length === 0) throw new InputError(`--trace: ${path} holds no requests`);
  return requests.sort((a, b) => a.at - b.at);
}

const HostGroup = z
  .object({
    profile: z.string().refine((p) => p in HOST_PROFILES, {
      message: `unknown profile; known: ${Object.keys(HOST_PROFILES).join(", ")}`,
    }),
    count: z.number().int().min(1).max(10_000),
    gpus: z.number().int().min(1).max(8).optional(),
    /** Host RAM in GiB, where it differs from the profile's (a larger size of the family). */
    memoryGiB: z.number().positive().max(65_536).optional(),
    host: ScenarioHost.partial().optional(),
  })
  .strict();

export const FleetFile = z
  .object({
    hosts: z.array(HostGroup).min(1),
    defaults: z.object({ endpoint: EndpointSpec.partial() }).strict().optional(),
    endpoints: z.record(z.string(), EndpointSpec.partial()).optional(),
  })
  .strict();

export function parseFleet(path: string): ReplayFleet {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new InputError(`--fleet: cannot read ${path} as JSON: ${(error as Error).message}`);
  }
  const parsed = FleetFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InputError(`--fleet: ${["fleet", ...issue.path].join(".")}: ${issue.message}`);
  }
  const fleet = parsed.data;
  const hosts: ReplayHost[] = [];
  for (const group of fleet.hosts) {
    const profile = (HOST_PROFILES as Record<string, HostProfile>)[group.profile]!;
    // One memory figure: what sleepers may hold and what the page cache has for a start.
    const memoryGiB = group.memoryGiB ?? profile.memoryGiB;
    for (let i = 0; i < group.count; i++)
      hosts.push({
        name: `${group.profile}-${i + 1}`,
        gpuModel: (profile.gpu?.model ?? "none").replace(/^NVIDIA /, ""),
        gpus: group.gpus ?? profile.gpu?.count ?? 0,
        host: { ...scenarioHostFromProfile(profile), memoryGiB, ...group.host },
        memoryBytes: memoryGiB * 2 ** 30,
      });
  }
  const defaults = { ...BUILT_IN_ENDPOINT_SPEC, ...fleet.defaults?.endpoint };
  return {
    hosts,
    endpoint: (name) => {
      const spec = { ...defaults, ...fleet.endpoints?.[name] };
      const checked = EndpointSpec.safeParse(spec);
      if (!checked.success)
        throw new InputError(
          `--fleet: endpoints.${name}.${checked.error.issues[0]!.path.join(".")}: ${checked.error.issues[0]!.message}`,
        );
      return checked.data;
    },
  };
}

/** The fleet with endpoint specs of a generated workload laid over its own. */
export function withEndpointSpecs(
  fleet: ReplayFleet,
  specs: Record<string, Partial<EndpointSpec>>,
): ReplayFleet {
  const cache = new Map<string, EndpointSpec>();
  return {
    hosts: fleet.hosts,
    endpoint: (name) => {
      let spec = cache.get(name);
      if (!spec) {
        const merged = { ...fleet.endpoint(name), ...specs[name] };
        const checked = EndpointSpec.safeParse(merged);
        if (!checked.success)
          throw new InputError(
            `workload: endpoints.${name}.${checked.error.issues[0]!.path.join(".")}: ${checked.error.issues[0]!.message}`,
          );
        spec = checked.data;
        cache.set(name, spec);
      }
      return spec;
    },
  };
}
