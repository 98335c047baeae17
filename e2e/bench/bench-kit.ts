import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";

// What the benchmarks against the built dashboard share: the build they need, the queue keys
// they leave behind, and the median their rounds are reported by.

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Builds the dashboard once if there is no build (`next start` needs one); exits on failure. */
export function ensureDashboardBuilt(say: (message: string) => void): void {
  if (existsSync(join(root, "apps/web/.next/BUILD_ID"))) return;
  say("building the dashboard once (pnpm --filter @thaw/web build)");
  const build = spawnSync("pnpm", ["--filter", "@thaw/web", "build"], {
    cwd: root,
    stdio: ["ignore", process.stderr, process.stderr],
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/** Deletes the BullMQ keys of a run's own prefix (and nothing else) from Redis. */
export async function clearQueuePrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
