import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { STARGZ_TUNED } from "./containerd/config.ts";

// infra/agent/containerd-stargz-grpc/config.toml and the agent's deadlines must agree.
const CONFIG = new URL(
  "../../../../infra/agent/containerd-stargz-grpc/config.toml",
  import.meta.url,
);

/** Enough TOML for this file: [section] headers and `key = integer|string|bool` lines. */
function readToml(text: string): Map<string, string> {
  const values = new Map<string, string>();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*$/, "").trim();
    const header = /^\[\[?([^\]]+)\]\]?$/.exec(line);
    if (header?.[1]) section = header[1] + ".";
    const pair = /^([A-Za-z_]+)\s*=\s*(.+)$/.exec(line);
    if (pair?.[1] && pair[2]) values.set(section + pair[1], pair[2].replace(/^"|"$/g, ""));
  }
  return values;
}

describe("stargz-snapshotter config template", () => {
  it("holds the tuned values the agent's deadlines are derived from", async () => {
    const toml = readToml(await readFile(CONFIG, "utf8"));
    expect(Number(toml.get("prefetch_timeout_sec"))).toBe(STARGZ_TUNED.prefetchTimeoutSeconds);
    expect(Number(toml.get("resolver.request_timeout_sec"))).toBe(
      STARGZ_TUNED.requestTimeoutSeconds,
    );
    expect(Number(toml.get('resolver.host."@REGISTRY_HOST@".mirrors.request_timeout_sec'))).toBe(
      STARGZ_TUNED.requestTimeoutSeconds,
    );
    expect(Number(toml.get("blob.fetching_timeout_sec"))).toBe(STARGZ_TUNED.fetchingTimeoutSeconds);
    expect(Number(toml.get("blob.chunk_size"))).toBe(STARGZ_TUNED.lazyChunkSizeBytes);
    expect(Number(toml.get("blob.prefetch_chunk_size"))).toBe(STARGZ_TUNED.prefetchChunkSizeBytes);
    expect(Number(toml.get("directory_cache.max_cache_fds"))).toBe(STARGZ_TUNED.maxCacheFds);
  });

  it("keeps prefetch ranges large and lazy reads small, and the defaults beaten", () => {
    expect(STARGZ_TUNED.lazyChunkSizeBytes).toBeLessThanOrEqual(64 * 1024);
    expect(STARGZ_TUNED.prefetchChunkSizeBytes).toBeGreaterThan(
      100 * STARGZ_TUNED.lazyChunkSizeBytes,
    );
    expect(STARGZ_TUNED.prefetchTimeoutSeconds).toBeGreaterThan(10); // default 10 s
    expect(STARGZ_TUNED.requestTimeoutSeconds).toBeGreaterThan(30); // default 30 s
    expect(STARGZ_TUNED.maxCacheFds).toBeGreaterThan(10); // default 10
  });
});
