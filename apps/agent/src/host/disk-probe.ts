import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MeasuredDisk } from "@thaw/protocol";
import { z } from "zod";

// What the host's data disk really does: a short sequential probe with direct I/O (the page
// cache would report memory, not the disk) at first boot, kept in the state directory so
// later boots reuse it. The instance profile says what a default volume does; the provider
// may have provisioned more, or the operator moved containerd elsewhere: this is the figure
// the predictor and the bottleneck hints should reason with.
//
// `dd` (coreutils, on every host) does the I/O: Node cannot give O_DIRECT the aligned buffers
// it needs. A few dd streams at once, each with large requests, keep enough I/O in flight to
// reach a network volume's ceiling, as containerd's parallel unpacks and a concurrent weights
// loader do; one synchronous stream would measure latency instead.

const MIB = 1024 * 1024;
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface DiskProbeOptions {
  /** A directory on the disk to measure (created if missing); the probe's files are removed. */
  dir: string;
  /** Bytes written, then read back, over all streams. */
  bytes?: number;
  streams?: number;
  /** Bytes per request. */
  blockBytes?: number;
  /** Each direction stops here and counts what it moved (dd reports it when interrupted). */
  timeoutMs?: number;
  /** The dd to run (tests). */
  ddPath?: string;
}

export const DISK_PROBE_DEFAULTS = {
  bytes: 256 * MIB,
  streams: 4,
  blockBytes: 4 * MIB,
  timeoutMs: 4_000,
} as const;

export interface DiskThroughput {
  readMiBps: number;
  writeMiBps: number;
}

/** One dd's closing statistics: "268435456 bytes (268 MB, 256 MiB) copied, 0.5 s, 537 MB/s". */
export function parseDdStats(stderr: string): { bytes: number; seconds: number } | null {
  // GNU and busybox dd both print "<n> bytes … copied, <t> s"; the last line is the total.
  const matches = [...stderr.matchAll(/(\d+) bytes\b[^\n]*? copied, ([\d.]+(?:e-?\d+)?) s/g)];
  const last = matches.at(-1);
  if (!last) return null;
  const bytes = Number(last[1]);
  const seconds = Number(last[2]);
  return Number.isFinite(bytes) && Number.isFinite(seconds) ? { bytes, seconds } : null;
}

/**
 * Throughput of streams that ran side by side: everything they moved over the longest of
 * them. Null when they moved nothing or took no measurable time.
 */
export function aggregateMiBps(runs: readonly { bytes: number; seconds: number }[]): number | null {
  const bytes = runs.reduce((sum, r) => sum + r.bytes, 0);
  const seconds = Math.max(0, ...runs.map((r) => r.seconds));
  if (bytes <= 0 || seconds <= 0) return null;
  return Math.round((bytes / MIB / seconds) * 10) / 10;
}

/** Measures sequential write, then read, throughput of the disk under `dir` with direct I/O. */
export async function probeDisk(options: DiskProbeOptions): Promise<DiskThroughput> {
  const { bytes, streams, blockBytes, timeoutMs } = { ...DISK_PROBE_DEFAULTS, ...options };
  const dd = options.ddPath ?? "dd";
  mkdirSync(options.dir, { recursive: true });
  const free = statfsSync(options.dir);
  // Room for the probe's files and some to spare: never fill the disk containerd runs on.
  if (free.bavail * free.bsize < bytes + 1024 * MIB)
    throw new Error(`disk probe: less than ${bytes / MIB + 1024} MiB free in ${options.dir}`);
  const blocksPerStream = Math.max(1, Math.floor(bytes / streams / blockBytes));
  const files = Array.from({ length: streams }, (_, i) =>
    join(options.dir, `.thaw-disk-probe-${process.pid}-${i}`),
  );
  const bs = `bs=${blockBytes}`;
  try {
    const written = await Promise.all(
      files.map((file) =>
        runDd(
          dd,
          ["if=/dev/zero", `of=${file}`, bs, `count=${blocksPerStream}`, "oflag=direct"],
          timeoutMs,
        ),
      ),
    );
    const read = await Promise.all(
      files.map((file) => runDd(dd, [`if=${file}`, "of=/dev/null", bs, "iflag=direct"], timeoutMs)),
    );
    const writeMiBps = aggregateMiBps(written);
    const readMiBps = aggregateMiBps(read);
    if (writeMiBps === null || readMiBps === null)
      throw new Error("disk probe: dd moved no bytes in measurable time");
    return { readMiBps, writeMiBps };
  } finally {
    for (const file of files) rmSync(file, { force: true });
  }
}

/** Runs one dd; past the timeout it is interrupted, and what it moved until then counts. */
function runDd(
  dd: string,
  args: string[],
  timeoutMs: number,
): Promise<{ bytes: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(dd, args, {
      stdio: ["ignore", "ignore", "pipe"],
      // dd's statistics in the C locale, whatever the host's; dd is coreutils, in the system path.
      env: { PATH: SYSTEM_PATH, LC_ALL: "C" },
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 16_384) stderr += chunk;
    });
    let interrupted = false;
    const timer = setTimeout(() => {
      interrupted = true;
      // SIGINT: dd prints its statistics, then exits.
      child.kill("SIGINT");
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`disk probe: cannot run ${dd}: ${error.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const stats = parseDdStats(stderr);
      if ((code === 0 || interrupted) && stats) resolve(stats);
      else
        reject(
          new Error(
            `disk probe: ${dd} ${args.join(" ")} failed: ${stderr.trim().split("\n")[0] ?? `exit ${code}`}`,
          ),
        );
    });
  });
}

// --- the cache ---------------------------------------------------------------------------

const CACHE_FILE = "disk-probe.json";

const CachedProbe = MeasuredDisk.extend({
  /** The directory measured: another one (the operator moved the data disk) is probed anew. */
  dir: z.string(),
});
type CachedProbe = z.infer<typeof CachedProbe>;

/** The cached measurement of `dir`, or undefined (none, another directory, unreadable). */
export function readCachedProbe(stateDir: string, dir: string): MeasuredDisk | undefined {
  let text: string;
  try {
    text = readFileSync(join(stateDir, CACHE_FILE), "utf8");
  } catch {
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const cached = CachedProbe.safeParse(json);
  if (!cached.success || cached.data.dir !== dir) return undefined;
  const { dir: _measured, ...measured } = cached.data;
  return measured;
}

function writeCachedProbe(stateDir: string, probe: CachedProbe): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(stateDir, CACHE_FILE), `${JSON.stringify(probe, null, 2)}\n`, {
    mode: 0o600,
  });
}

export interface MeasureDiskOptions extends DiskProbeOptions {
  stateDir: string;
  /** The probe to run when nothing is cached (tests replace it). */
  probe?: (options: DiskProbeOptions) => Promise<DiskThroughput>;
  now?: () => Date;
}

/**
 * The disk's measured throughput: cached from an earlier boot, else probed now and cached.
 * Throws when the probe fails (nothing is cached, so the next boot tries again).
 */
export async function measureDisk(options: MeasureDiskOptions): Promise<{
  measured: MeasuredDisk;
  cached: boolean;
}> {
  const cached = readCachedProbe(options.stateDir, options.dir);
  if (cached) return { measured: cached, cached: true };
  const { readMiBps, writeMiBps } = await (options.probe ?? probeDisk)(options);
  const measured = MeasuredDisk.parse({
    readMiBps,
    writeMiBps,
    measuredAt: (options.now?.() ?? new Date()).toISOString(),
  });
  writeCachedProbe(options.stateDir, { ...measured, dir: options.dir });
  return { measured, cached: false };
}
