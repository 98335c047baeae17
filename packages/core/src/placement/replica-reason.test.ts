import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ReplicaDrainIntent, ReplicaPendingCause } from "../vocabulary/index.ts";
import {
  replicaReasonData,
  replicaReasonText,
  type ReplicaReason,
  type ReplicaReasonColumns,
} from "./replica-reason.ts";

const text = (reason: ReplicaReason | null) => replicaReasonText(replicaReasonData(reason));

describe("a replica's reason", () => {
  // The sentences every writer put in Replica.pendingReason before causes were columns: the
  // dashboard shows the same ones.
  it.each<[ReplicaReason, string]>([
    [
      { pendingCause: "waiting_for_capacity", gpus: 1, gpuType: "A10G" },
      "no ready node with 1 free A10G GPU: waiting for capacity",
    ],
    [
      { pendingCause: "waiting_for_capacity", gpus: 2, gpuType: "H100" },
      "no ready node with 2 free H100 GPUs: waiting for capacity",
    ],
    [
      {
        pendingCause: "waiting_for_capacity",
        infeasible: [
          { reason: "needs 1 free GPU(s), node has 0", count: 3 },
          { reason: "no snapshot of this deployment", count: 1 },
        ],
      },
      "no feasible option: needs 1 free GPU(s), node has 0 (3); no snapshot of this deployment (1)",
    ],
    [
      {
        pendingCause: "host_launch_blocked",
        gpuModel: "A10G",
        blockedBy: "spend cap $1.5/h reached ($1.01/h running)",
      },
      "waiting for a A10G host: spend cap $1.5/h reached ($1.01/h running)",
    ],
    [
      { pendingCause: "start_not_accepted", path: "pull", failure: "agent_unreachable" },
      "pull start not accepted (agent_unreachable); trying the next-best option",
    ],
    [
      { pendingCause: "start_failed", path: "restore", phase: "restore" },
      "restore start failed in restore; trying the next-best option",
    ],
    [
      { pendingCause: "start_failed", path: "lazy", phase: null },
      "lazy start failed; trying the next-best option",
    ],
    [
      { pendingCause: "start_refused", path: "pull", failure: "image_refused" },
      "pull start refused before it was sent (image_refused); given up",
    ],
    [{ pendingCause: "start_attempts_exhausted", attempts: 4 }, "gave up after 4 failed starts"],
    [{ drainIntent: "scale_down" }, "scaled down"],
    [{ drainIntent: "park_candidate" }, "scaled down: warm pool may park it"],
    [{ drainIntent: "keep_alive_over" }, "warm pool: keep-alive over"],
    [
      { drainIntent: "park_refused", failure: "agent_refused (unknown)" },
      "warm pool: park refused: agent_refused (unknown)",
    ],
    [{ drainIntent: "node_drained" }, "node drained"],
    [{ drainIntent: "node_lost" }, "node lost"],
    [
      { drainIntent: "snapshot_captured", snapshotId: "0193a0c4-5d7e-7c1a-9f00-2b4c6d8e0f12" },
      "stopped by the capture of snapshot 0193a0c4-5d7e-7c1a-9f00-2b4c6d8e0f12",
    ],
    [{ drainIntent: "vanished_from_node" }, "parked replica no longer on its node"],
  ])("renders %j as the dashboard showed it", (reason, sentence) => {
    expect(text(reason)).toBe(sentence);
  });

  it("has no sentence when it has no reason", () => {
    expect(text(null)).toBeNull();
  });

  it("writes the cause or the intent, never both, and the particulars beside them", () => {
    expect(replicaReasonData({ pendingCause: "start_attempts_exhausted", attempts: 4 })).toEqual({
      pendingCause: "start_attempts_exhausted",
      drainIntent: null,
      reasonDetail: { attempts: 4 },
    });
    expect(replicaReasonData({ drainIntent: "park_candidate" })).toEqual({
      pendingCause: null,
      drainIntent: "park_candidate",
      reasonDetail: {},
    });
    expect(replicaReasonData(null)).toEqual({
      pendingCause: null,
      drainIntent: null,
      reasonDetail: {},
    });
  });

  it("reads every cause and intent, even when its particulars do not parse", () => {
    const row = (columns: Partial<ReplicaReasonColumns>): ReplicaReasonColumns => ({
      pendingCause: null,
      drainIntent: null,
      reasonDetail: { gpus: "many" },
      ...columns,
    });
    for (const pendingCause of ReplicaPendingCause.options)
      expect(replicaReasonText(row({ pendingCause })), pendingCause).toMatch(/\w/);
    for (const drainIntent of ReplicaDrainIntent.options)
      expect(replicaReasonText(row({ drainIntent })), drainIntent).toMatch(/\w/);
    expect(replicaReasonText(row({ pendingCause: "waiting_for_capacity" }))).toBe(
      "waiting for capacity",
    );
    // A text the backfill kept whole is shown as it was.
    expect(
      replicaReasonText(
        row({ pendingCause: "start_failed", reasonDetail: { note: "pull start failed; cut…" } }),
      ),
    ).toBe("pull start failed; cut…");
    expect(replicaReasonText(row({ reasonDetail: { note: "an older sentence" } }))).toBe(
      "an older sentence",
    );
  });
});

// Rewording a sentence in replica-reason.ts must change no decision. Decisions read
// Replica.pendingCause and Replica.drainIntent; the text column they used to read is gone, and
// the rendered sentence is only ever shown or logged. This reads the sources to keep it so.
describe("no decision reads a replica's displayed reason", () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory())
        return ["node_modules", "generated", ".next", "dist"].includes(entry.name)
          ? []
          : sources(path);
      return /\.(ts|tsx|mts)$/.test(entry.name) ? [path] : [];
    });
  const files = ["packages", "apps"]
    .flatMap((group) =>
      readdirSync(join(root, group), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => join(root, group, d.name, "src")),
    )
    .concat(join(root, "e2e", "src"))
    .filter((dir) => {
      try {
        return readdirSync(dir).length >= 0;
      } catch {
        return false;
      }
    })
    .flatMap(sources)
    .map((path) => ({ path: relative(root, path), source: readFileSync(path, "utf8") }));

  it("reads the whole workspace", () => {
    expect(files.some((f) => f.path === "packages/core/src/placement/reconcile-endpoint.ts")).toBe(
      true,
    );
    expect(files.some((f) => f.path.startsWith("apps/scheduler/src/workers/"))).toBe(true);
  });

  it("has no text column to compare: pendingReason is gone from every source", () => {
    // This test, and the test of the migration that read the old column into the new ones.
    const naming = [
      "packages/core/src/placement/replica-reason.test.ts",
      "packages/core/src/placement/replica-reason-backfill.integration.test.ts",
    ];
    expect(
      files
        .filter((f) => !naming.includes(f.path) && /pendingReason/.test(f.source))
        .map((f) => f.path),
    ).toEqual([]);
  });

  it("renders the sentence only where it is shown or logged", () => {
    // Each of these puts the sentence in front of a person, never in a condition.
    const display = [
      "packages/core/src/placement/replica-reason.ts",
      // The endpoint page's replica list.
      "packages/core/src/analytics/get-endpoint-detail.ts",
      // The place job's result, which its worker logs.
      "packages/core/src/placement/place-replica.ts",
      // A cancelled cold start's error, shown on the cold start.
      "packages/core/src/placement/reconcile-endpoint.ts",
    ];
    const renderers = files
      .filter((f) => /replicaReasonText\b/.test(f.source))
      .filter((f) => !/\.test\.tsx?$/.test(f.path))
      .map((f) => f.path);
    expect(renderers.filter((path) => !display.includes(path))).toEqual([]);
  });
});
