import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "@thaw/core/cold-start-model";
import {
  drawModel,
  endpointSpecForModel,
  gpuPlacement,
  POOLS,
  serviceSeconds,
  type CatalogueModel,
  type Pool,
} from "./model-catalogue.ts";
import type { EndpointSpec, TraceRequest } from "@thaw/core/replay";
import { InputError } from "./replay-input.ts";
import { sampleExponential, sampleLogGamma, sampleLogWeibull } from "./seeded-distributions.ts";

// A many-tenant workload from ServeGen's client traces (../shared/data/traces/README.md):
// each client one endpoint, each 600-s window's arrivals drawn as ServeGen draws them — the
// window's count from its rate, inter-arrival times from the window's fitted gamma or Weibull,
// rescaled to fill the window — with one global rate scale so the whole trace holds about
// `targetRequests` requests while the clients keep their relative rates (which span orders of
// magnitude; most are idle most of the time).

export const WINDOW_SECONDS = 600;
const WINDOWS_PER_DAY = 86_400 / WINDOW_SECONDS;
export const DEFAULT_TARGET_REQUESTS = 1_000_000;
export const SERVEGEN_CLIENTS = 422;

const POOL_DIRS: Record<Pool, string> = {
  "m-small": "language/m-small",
  "m-mid": "language/m-mid",
  "m-large": "language/m-large",
  "deepseek-r1": "reason/deepseek-r1",
  "mm-image": "multimodal/mm-image",
};

export interface ServeGenOptions {
  /** The servegen directory (language/, reason/, multimodal/). */
  dir: string;
  /** Clients to replay, each one endpoint; default all 422. */
  endpoints?: number;
  /** Days of 600-s windows; default 14 (the 14-day clients' span). */
  days?: number;
  seed?: number;
  targetRequests?: number;
  /**
   * Context/generated token pairs to draw request lengths from; default the Azure LLM
   * inference trace (conversation) beside the servegen directory.
   */
  lengthsTrace?: string;
}

export interface ServeGenEndpoint {
  endpoint: string;
  pool: Pool;
  client: number;
  model: string;
  gpuType: string;
  gpus: number;
  /** Days of windows the client's file holds (1 or 14). */
  dataDays: number;
  requests: number;
}

export interface ServeGenWorkload {
  /** Sorted by `at`. */
  requests: TraceRequest[];
  endpoints: Record<string, Partial<EndpointSpec>>;
  /** The global rate factor applied to every client. */
  scale: number;
  clients: ServeGenEndpoint[];
}

// --- Client traces -----------------------------------------------------------------------------

/** families[]: 0 for an idle window. */
const GAMMA = 1;
const WEIBULL = 2;

interface ClientTrace {
  pool: Pool;
  client: number;
  /** Per window: mean rate (requests/s), fitted family, shape and scale. */
  rates: Float64Array;
  families: Uint8Array;
  shapes: Float64Array;
  scales: Float64Array;
}

function listClients(dir: string, pool: Pool): number[] {
  const path = join(dir, POOL_DIRS[pool]);
  let names: string[];
  try {
    names = readdirSync(path);
  } catch (error) {
    throw new InputError(
      `--dir: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  return names
    .map((name) => /^chunk-(\d+)-trace\.csv$/.exec(name)?.[1])
    .filter((id): id is string => id !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

function readClient(dir: string, pool: Pool, client: number): ClientTrace {
  const path = join(dir, POOL_DIRS[pool], `chunk-${client}-trace.csv`);
  const lines = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  const trace: ClientTrace = {
    pool,
    client,
    rates: new Float64Array(lines.length),
    families: new Uint8Array(lines.length),
    shapes: new Float64Array(lines.length),
    scales: new Float64Array(lines.length),
  };
  const bad = (i: number, why: string) =>
    new InputError(`--dir: ${path} line ${i + 1} ${why}: '${lines[i]!.trim()}'`);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // Most windows are idle: read the start and rate, and split the rest only when active.
    const first = line.indexOf(",");
    const second = line.indexOf(",", first + 1);
    const start = line.slice(0, first);
    if (first < 0 || second < 0 || Number(start) !== i * WINDOW_SECONDS)
      throw bad(i, `does not start at ${i * WINDOW_SECONDS}`);
    const r = Number(line.slice(first + 1, second));
    if (!(r >= 0) || !Number.isFinite(r)) throw bad(i, "has no rate");
    trace.rates[i] = r;
    if (r === 0) continue;
    const [, , , family = "", shape = "", scale = ""] = line.split(",");
    const k = Number(shape);
    const theta = Number(scale);
    if (!(k > 0) || !(theta > 0) || !Number.isFinite(k) || !Number.isFinite(theta))
      throw bad(i, "has a rate but no positive fit parameters");
    if (family === "Gamma") trace.families[i] = GAMMA;
    else if (family === "Weibull") trace.families[i] = WEIBULL;
    else throw bad(i, `has an unknown distribution '${family}'`);
    trace.shapes[i] = k;
    trace.scales[i] = theta;
  }
  if (lines.length === 0) throw new InputError(`--dir: ${path} holds no windows`);
  return trace;
}

// --- Seeds -----------------------------------------------------------------------------------

/** An independent stream per purpose and client: FNV-1a of the label, mixed with the seed. */
function stream(seed: number, label: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
  return mulberry32((Math.imul(seed >>> 0, 0x9e3779b1) ^ h) >>> 0);
}

/** Seeded partial Fisher–Yates: `count` distinct items of `items`. */
function sample<T>(items: readonly T[], count: number, random: () => number): T[] {
  const copy = [...items];
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, count);
}

/**
 * How many of `total` endpoints each pool gets: proportional to its clients, largest
 * remainder first, so a 100-endpoint sample has the 422 clients' mix of pools.
 */
export function stratify(
  clientsPerPool: Record<Pool, number>,
  total: number,
): Record<Pool, number> {
  const all = POOLS.reduce((sum, pool) => sum + clientsPerPool[pool], 0);
  const exact = POOLS.map((pool) => ({ pool, share: (clientsPerPool[pool] * total) / all }));
  const counts = Object.fromEntries(
    exact.map(({ pool, share }) => [pool, Math.floor(share)]),
  ) as Record<Pool, number>;
  let left = total - POOLS.reduce((sum, pool) => sum + counts[pool], 0);
  for (const { pool } of [...exact].sort(
    (a, b) => (b.share % 1) - (a.share % 1) || POOLS.indexOf(a.pool) - POOLS.indexOf(b.pool),
  )) {
    if (left === 0) break;
    if (counts[pool] < clientsPerPool[pool]) {
      counts[pool]++;
      left--;
    }
  }
  return counts;
}

// --- Request lengths -------------------------------------------------------------------------

interface LengthPairs {
  context: Int32Array;
  generated: Int32Array;
}

/** TIMESTAMP,ContextTokens,GeneratedTokens rows of an Azure LLM inference trace. */
function readLengthPairs(path: string): LengthPairs {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InputError(
      `--lengths: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (!/^TIMESTAMP,ContextTokens,GeneratedTokens$/i.test(lines.shift()?.trim() ?? ""))
    throw new InputError(`--lengths: ${path} is not an Azure LLM inference trace`);
  const pairs = { context: new Int32Array(lines.length), generated: new Int32Array(lines.length) };
  for (const [i, line] of lines.entries()) {
    const [, context = "", generated = ""] = line.split(",");
    const c = Number(context);
    const g = Number(generated);
    if (!Number.isInteger(c) || c < 0 || !Number.isInteger(g) || g < 0)
      throw new InputError(`--lengths: ${path} line ${i + 2} is malformed: '${line}'`);
    pairs.context[i] = c;
    pairs.generated[i] = g;
  }
  if (lines.length === 0) throw new InputError(`--lengths: ${path} holds no requests`);
  return pairs;
}

/**
 * Reasoning outputs: DeepSeek-R1 generated 4,717.5 tokens on average on hard MATH problems
 * ("Token-Hungry, Yet Precise: DeepSeek R1 Highlights the Need for Multi-Step Reasoning Over
 * Speed in MATH", https://arxivlens.com/PaperView/Details/token-hungry-yet-precise-deepseek-r1-highlights-the-need-for-multi-step-reasoning-over-speed-in-math-1329-cb075dd5).
 * Drawn exponential with that mean — ServeGen fits language models' output lengths with
 * exponentials (https://www.themoonlight.io/review/servegen-workload-characterization-and-generation-of-large-language-model-serving-in-production);
 * its reasoning lengths are bimodal, which one exponential does not reproduce, but a slot's
 * occupancy depends on the mean. Hard math makes this an upper-end figure.
 */
export const REASONING_MEAN_GENERATED_TOKENS = 4_717.5;

/**
 * Image tokens per request: Qwen2-VL makes one token of each 28×28-pixel patch; its model card
 * suggests min/max pixels for "a token count range of 256-1280"
 * (https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/discussions/47). One image per request,
 * uniform over that range.
 */
export const IMAGE_TOKENS_RANGE = [256, 1280] as const;

/**
 * Context and generated tokens of one request. Language pools draw a real (context,
 * generated) pair from the Azure conversation trace (Patel et al., "Splitwise", ISCA'24: 19,366
 * requests, mean 1,155 context and 211 generated tokens); reasoning keeps the pair's context
 * and generates REASONING_MEAN_GENERATED_TOKENS on average; multimodal adds one image's tokens
 * to the pair's context.
 */
function drawTokens(
  pool: Pool,
  pairs: LengthPairs,
  random: () => number,
): { context: number; generated: number } {
  const i = Math.floor(random() * pairs.context.length);
  const context = pairs.context[i]!;
  const generated = pairs.generated[i]!;
  if (pool === "deepseek-r1")
    return {
      context,
      generated: Math.round(sampleExponential(random, REASONING_MEAN_GENERATED_TOKENS)),
    };
  if (pool === "mm-image") {
    const [low, high] = IMAGE_TOKENS_RANGE;
    return { context: context + low + Math.floor(random() * (high - low + 1)), generated };
  }
  return { context, generated };
}

// --- Rate scale ------------------------------------------------------------------------------

interface Selected {
  trace: ClientTrace;
  endpoint: string;
  model: CatalogueModel;
}

/** How many of `totalWindows` windows replay the client's window `j` (files repeat cyclically). */
function multiplicity(j: number, length: number, totalWindows: number): number {
  return j < totalWindows ? Math.floor((totalWindows - 1 - j) / length) + 1 : 0;
}

/**
 * The global factor s that makes the expected request count the target: each active window
 * yields rate·600·s requests in expectation (rounded stochastically, so a quiet client's
 * windows mostly yield none and its rate relative to busy clients is kept).
 */
function solveScale(selected: readonly Selected[], totalWindows: number, target: number): number {
  let sumExpected = 0;
  for (const { trace } of selected) {
    const length = trace.rates.length;
    for (let j = 0; j < Math.min(length, totalWindows); j++)
      if (trace.rates[j]! > 0)
        sumExpected += trace.rates[j]! * WINDOW_SECONDS * multiplicity(j, length, totalWindows);
  }
  if (sumExpected === 0)
    throw new InputError("the selected clients have no active window in the requested days");
  return target / sumExpected;
}

// --- Generation ------------------------------------------------------------------------------

/**
 * One endpoint per ServeGen client: `<pool>-<client>`, e.g. `m-large-17`. Deterministic for a
 * seed: the sample of clients, each endpoint's model, every arrival and every service time
 * come from seeded streams, one per purpose and client.
 *
 * Windows: `days` × 144 windows from time 0. A client whose file is shorter than that repeats
 * its own windows cyclically — the multimodal and reasoning clients (108 of 422) hold one day
 * of windows, so their day repeats; the language clients hold 14 days.
 *
 * Arrivals in a window with rate r > 0: n ≈ r × 600 × scale requests (rounded stochastically; ServeGen draws
 * ceil(rate × 600); n inter-arrival times from the window's fitted distribution, rescaled to
 * fill the 600 s. The rescaled gaps are laid around the window from a uniform phase (wrapping
 * at its end) so that a window with few arrivals does not put them on its boundary; the gaps
 * between consecutive arrivals are the sampled ones, so the fit's burstiness is kept even when
 * the scale makes n small. An idle window (rate 0) yields nothing.
 */
export function generateServeGenWorkload(options: ServeGenOptions): ServeGenWorkload {
  const seed = options.seed ?? 1;
  const days = options.days ?? 14;
  const target = options.targetRequests ?? DEFAULT_TARGET_REQUESTS;
  if (!Number.isInteger(days) || days < 1)
    throw new InputError(`--days must be a whole number ≥ 1, not ${days}`);
  if (!Number.isInteger(target) || target < 1)
    throw new InputError(`--target must be a whole number ≥ 1, not ${target}`);
  if (!Number.isInteger(seed)) throw new InputError(`--seed must be an integer, not ${seed}`);

  const clientsPerPool = Object.fromEntries(
    POOLS.map((pool) => [pool, listClients(options.dir, pool)]),
  ) as Record<Pool, number[]>;
  const available = POOLS.reduce((sum, pool) => sum + clientsPerPool[pool].length, 0);
  const wanted = options.endpoints ?? available;
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > available)
    throw new InputError(
      `--endpoints must be a whole number from 1 to ${available}, not ${wanted}`,
    );
  const counts = stratify(
    Object.fromEntries(POOLS.map((pool) => [pool, clientsPerPool[pool].length])) as Record<
      Pool,
      number
    >,
    wanted,
  );

  const selected: Selected[] = [];
  for (const pool of POOLS) {
    const chosen = sample(clientsPerPool[pool], counts[pool], stream(seed, `select|${pool}`));
    for (const client of chosen.sort((a, b) => a - b)) {
      selected.push({
        trace: readClient(options.dir, pool, client),
        endpoint: `${pool}-${client}`,
        model: drawModel(pool, stream(seed, `model|${pool}|${client}`)),
      });
    }
  }

  const totalWindows = days * WINDOWS_PER_DAY;
  const scale = solveScale(selected, totalWindows, target);
  const pairs = readLengthPairs(
    options.lengthsTrace ?? join(options.dir, "..", "AzureLLMInferenceTrace_conv.csv"),
  );

  const clients = selected.map((s) => ({
    ...s,
    placement: gpuPlacement(s.model),
    arrivals: stream(seed, `arrivals|${s.endpoint}`),
    lengths: stream(seed, `lengths|${s.endpoint}`),
    requests: 0,
  }));
  const requests: TraceRequest[] = [];
  let logGaps = new Float64Array(64);
  for (let w = 0; w < totalWindows; w++) {
    const windowStart = w * WINDOW_SECONDS;
    const blockStart = requests.length;
    for (const c of clients) {
      const { trace } = c;
      const j = w % trace.rates.length;
      const rate = trace.rates[j]!;
      if (rate <= 0) continue;
      // Stochastic rounding: E[n] = rate·600·scale, whatever the scale.
      const expected = rate * WINDOW_SECONDS * scale;
      const n = Math.floor(expected) + (c.arrivals() < expected - Math.floor(expected) ? 1 : 0);
      if (n === 0) continue;
      if (logGaps.length < n) logGaps = new Float64Array(n * 2);
      const shape = trace.shapes[j]!;
      const fitScale = trace.scales[j]!;
      let maxLog = Number.NEGATIVE_INFINITY;
      for (let k = 0; k < n; k++) {
        const log =
          trace.families[j] === GAMMA
            ? sampleLogGamma(c.arrivals, shape) + Math.log(fitScale)
            : sampleLogWeibull(c.arrivals, shape, fitScale);
        logGaps[k] = log;
        if (log > maxLog) maxLog = log;
      }
      // Rescale in logs: gaps relative to the largest, so none overflows or all underflow.
      let total = 0;
      for (let k = 0; k < n; k++) {
        logGaps[k] = Math.exp(logGaps[k]! - maxLog);
        total += logGaps[k]!;
      }
      const phase = c.arrivals() * WINDOW_SECONDS;
      let elapsed = 0;
      for (let k = 0; k < n; k++) {
        const offset = (phase + (elapsed / total) * WINDOW_SECONDS) % WINDOW_SECONDS;
        elapsed += logGaps[k]!;
        const { context, generated } = drawTokens(trace.pool, pairs, c.lengths);
        requests.push({
          // Keep the last arrival strictly inside its window despite rounding.
          at: windowStart + Math.min(offset, WINDOW_SECONDS - 1e-6),
          endpoint: c.endpoint,
          seconds: serviceSeconds(c.model, c.placement, context, generated),
        });
      }
      c.requests += n;
    }
    // Windows are disjoint in time: sorting each window's block sorts the whole trace.
    const block = requests.slice(blockStart).sort((a, b) => a.at - b.at);
    for (let k = 0; k < block.length; k++) requests[blockStart + k] = block[k]!;
  }

  const endpoints: Record<string, Partial<EndpointSpec>> = {};
  for (const c of clients) endpoints[c.endpoint] = endpointSpecForModel(c.model);
  return {
    requests,
    endpoints,
    scale,
    clients: clients.map((c) => ({
      endpoint: c.endpoint,
      pool: c.trace.pool,
      client: c.trace.client,
      model: c.model.id,
      gpuType: c.placement.gpuType,
      gpus: c.placement.gpus,
      dataDays: c.trace.rates.length / WINDOWS_PER_DAY,
      requests: c.requests,
    })),
  };
}
