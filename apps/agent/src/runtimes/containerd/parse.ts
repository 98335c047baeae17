// Parsers for the text ctr prints. ctr has no machine-readable output for these commands,
// so each parser is small, tolerant of extra columns, and unit-tested against real output.

export type TaskStatus = "CREATED" | "RUNNING" | "PAUSED" | "PAUSING" | "STOPPED" | "UNKNOWN";

/** `ctr tasks ls`: "TASK  PID  STATUS" */
export function parseTaskList(stdout: string): Map<string, { pid: number; status: TaskStatus }> {
  const tasks = new Map<string, { pid: number; status: TaskStatus }>();
  for (const line of dataLines(stdout, "TASK")) {
    const [id, pid, status] = line.split(/\s+/);
    if (!id || !pid || !status) continue;
    tasks.set(id, { pid: Number(pid), status: knownStatus(status) });
  }
  return tasks;
}

/** `ctr tasks ps <id>`: "PID  INFO" */
export function parseTaskProcesses(stdout: string): number[] {
  return dataLines(stdout, "PID")
    .map((line) => Number(line.split(/\s+/)[0]))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

export interface ListedImage {
  ref: string;
  digest: string;
  labels: Record<string, string>;
}

/** `ctr images ls`: "REF TYPE DIGEST SIZE PLATFORMS LABELS" (SIZE is two words, e.g. "1.0 MiB"). */
export function parseImageList(stdout: string): ListedImage[] {
  const images: ListedImage[] = [];
  for (const line of dataLines(stdout, "REF")) {
    const words = line.split(/\s+/);
    const at = words.findIndex((w) => /^sha256:[0-9a-f]{64}$/.test(w));
    const ref = words[0];
    const digest = words[at];
    if (at < 0 || !ref || !digest) continue;
    const labelText = words[at + 4] ?? "-";
    const labels: Record<string, string> = {};
    if (labelText !== "-") {
      for (const pair of labelText.split(",")) {
        const eq = pair.indexOf("=");
        if (eq > 0) labels[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    }
    images.push({ ref, digest, labels });
  }
  return images;
}

/** `ctr content ls -q`: one digest per line. */
export function parseDigestList(stdout: string): Set<string> {
  return new Set(
    stdout
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /^sha256:[0-9a-f]{64}$/.test(l)),
  );
}

const GO_DURATION_UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/** A Go time.Duration string ("61.070967ms", "1m2.5s") in seconds; undefined if malformed. */
export function parseGoDuration(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (GO_DURATION_UNITS[p[2] ?? ""] ?? 0), 0);
}

/**
 * Watches `ctr images pull` output as it streams: ctr prints "unpacking <platform> <digest>..."
 * when every blob is fetched and "done: <duration>" when the unpack ends. That splits the pull
 * phase into fetch and unpack time without a second command.
 */
export class PullOutputWatcher {
  private buffer = "";
  unpackStartedAt: number | undefined;
  unpackSeconds: number | undefined;
  /** The image's target digest (index or manifest), from "unpacking <platform> <digest>...". */
  imageDigest: string | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  push(chunk: string): void {
    this.buffer = (this.buffer + chunk).slice(-4096);
    if (this.unpackStartedAt === undefined && this.buffer.includes("unpacking ")) {
      this.unpackStartedAt = this.now();
    }
    this.imageDigest ??= /unpacking \S+ (sha256:[0-9a-f]{64})/.exec(this.buffer)?.[1];
    const done = /\bdone: (\S+)/.exec(this.buffer);
    if (done?.[1] !== undefined) this.unpackSeconds = parseGoDuration(done[1]);
  }
}

/**
 * stargz-snapshotter's Prometheus metrics: which of the image's layers recorded
 * `all_prefetches_completed` (a layer whose prefetch ran out of time falls back to lazy reads).
 */
export function parseStargzPrefetch(
  metricsText: string,
  layerDigests: readonly string[],
): { completedLayers: number; maxMilliseconds: number } {
  const wanted = new Set(layerDigests);
  const seen = new Map<string, number>();
  for (const line of metricsText.split("\n")) {
    if (!line.startsWith("stargz_fs_operation_duration_milliseconds_sum{")) continue;
    if (!line.includes('operation_type="all_prefetches_completed"')) continue;
    const layer = /layer="(sha256:[0-9a-f]{64})"/.exec(line)?.[1];
    const value = Number(line.trim().split(/\s+/).at(-1));
    if (layer && wanted.has(layer) && Number.isFinite(value)) seen.set(layer, value);
  }
  return {
    completedLayers: seen.size,
    maxMilliseconds: Math.max(0, ...seen.values()),
  };
}

function dataLines(stdout: string, header: string): string[] {
  return stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith(header + " ") && l !== header);
}

function knownStatus(status: string): TaskStatus {
  const known: TaskStatus[] = ["CREATED", "RUNNING", "PAUSED", "PAUSING", "STOPPED"];
  return (known as string[]).includes(status) ? (status as TaskStatus) : "UNKNOWN";
}
