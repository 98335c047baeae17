import { describe, expect, it } from "vitest";
import {
  parseDigestList,
  parseGoDuration,
  parseImageList,
  parseStargzPrefetch,
  parseTaskList,
  parseTaskProcesses,
  PullOutputWatcher,
} from "./parse.ts";

// Fixtures are ctr 1.6.20's real output on this machine.
const D = (c: string) => `sha256:${c.repeat(64)}`;

describe("ctr output parsers", () => {
  it("reads tasks", () => {
    const out =
      "TASK    PID      STATUS    \nr1      22105    RUNNING\nr2      22107    PAUSED\nr3      0        STOPPED\n";
    expect([...parseTaskList(out)]).toEqual([
      ["r1", { pid: 22105, status: "RUNNING" }],
      ["r2", { pid: 22107, status: "PAUSED" }],
      ["r3", { pid: 0, status: "STOPPED" }],
    ]);
    expect(parseTaskList("TASK    PID      STATUS    \n").size).toBe(0);
  });

  it("reads task processes", () => {
    expect(parseTaskProcesses("PID      INFO\n22105    -\n22190    -\n")).toEqual([22105, 22190]);
  });

  it("reads images, with their labels", () => {
    const out = [
      "REF                          TYPE                                       DIGEST                                                                  SIZE    PLATFORMS   LABELS ",
      `127.0.0.1:15999/thaw/probe:t application/vnd.oci.image.manifest.v1+json ${D("2")} 1.0 MiB linux/amd64 -      `,
      `reg/snap:1 application/vnd.oci.image.index.v1+json ${D("3")} 3.2 GiB linux/amd64,linux/arm64 thaw.snapshot-id=abc,x=y`,
    ].join("\n");
    expect(parseImageList(out)).toEqual([
      { ref: "127.0.0.1:15999/thaw/probe:t", digest: D("2"), labels: {} },
      { ref: "reg/snap:1", digest: D("3"), labels: { "thaw.snapshot-id": "abc", x: "y" } },
    ]);
  });

  it("reads content digests", () => {
    expect([...parseDigestList(`${D("a")}\n${D("b")}\n\n`)]).toEqual([D("a"), D("b")]);
  });

  it("reads Go durations", () => {
    expect(parseGoDuration("61.070967ms")).toBeCloseTo(0.061070967, 9);
    expect(parseGoDuration("1m2.5s")).toBe(62.5);
    expect(parseGoDuration("950µs")).toBeCloseTo(0.00095, 9);
    expect(parseGoDuration("soon")).toBeUndefined();
  });

  it("splits a pull into fetch and unpack from ctr's streamed output", () => {
    let now = 100;
    const watcher = new PullOutputWatcher(() => now);
    watcher.push("127.0.0.1:15999/thaw/probe:t: resolved |++++|\nelapsed: 0.1 s total: 0.0 B\n");
    expect(watcher.unpackStartedAt).toBeUndefined();
    now = 250;
    watcher.push(`unpacking linux/amd64 ${D("2")}...\n`);
    now = 400;
    watcher.push("done: 61.070967ms\t\n");
    expect(watcher.unpackStartedAt).toBe(250);
    expect(watcher.unpackSeconds).toBeCloseTo(0.061070967, 9);
  });

  it("reads which layers finished prefetch from stargz metrics", () => {
    const text = [
      `stargz_fs_operation_duration_milliseconds_sum{layer="${D("a")}",operation_type="all_prefetches_completed"} 1500`,
      `stargz_fs_operation_duration_milliseconds_sum{layer="${D("b")}",operation_type="all_prefetches_completed"} 3200.5`,
      `stargz_fs_operation_duration_milliseconds_sum{layer="${D("c")}",operation_type="all_prefetches_completed"} 10`,
      `stargz_fs_operation_duration_milliseconds_count{layer="${D("a")}",operation_type="all_prefetches_completed"} 1`,
    ].join("\n");
    expect(parseStargzPrefetch(text, [D("a"), D("b"), D("d")])).toEqual({
      completedLayers: 2,
      maxMilliseconds: 3200.5,
    });
  });
});
