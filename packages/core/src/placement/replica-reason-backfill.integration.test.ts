import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replicaReasonText } from "./replica-reason.ts";

// The migration that turned Replica."pendingReason" into a cause, an intent and particulars,
// run on rows holding every wording the text column ever held: each keeps the decision its
// text drove (the cause or intent) and reads on the dashboard exactly as before.

const migrations = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "db",
  "prisma",
  "migrations",
);
const migrationDir = readdirSync(migrations).find((d) => d.endsWith("_replica_reason_as_data"))!;
const migrationSql = readFileSync(join(migrations, migrationDir, "migration.sql"), "utf8");

const cutFailure =
  `pull start not accepted (${"x".repeat(600)}); trying the next-best option`.slice(0, 500);

/** Old text → what the backfill makes of it. */
const ROWS: [text: string | null, expected: Record<string, unknown>][] = [
  [
    "no ready node with 1 free A10G GPU: waiting for capacity",
    { pendingCause: "waiting_for_capacity", reasonDetail: { gpus: 1, gpuType: "A10G" } },
  ],
  [
    "no ready node with 2 free H100 GPUs: waiting for capacity",
    { pendingCause: "waiting_for_capacity", reasonDetail: { gpus: 2, gpuType: "H100" } },
  ],
  [
    // A reason that itself holds "; " (enumerateStartOptions joins a snapshot's reasons).
    "no feasible option: needs 1 free GPU(s), node has 0 (3); snapshot quarantined; snapshot of another GPU model (2)",
    {
      pendingCause: "waiting_for_capacity",
      reasonDetail: {
        infeasible: [
          { reason: "needs 1 free GPU(s), node has 0", count: 3 },
          { reason: "snapshot quarantined; snapshot of another GPU model", count: 2 },
        ],
      },
    },
  ],
  [
    "waiting for a A10G host: spend cap $1.5/h reached ($1.01/h running)",
    {
      pendingCause: "host_launch_blocked",
      reasonDetail: { gpuModel: "A10G", blockedBy: "spend cap $1.5/h reached ($1.01/h running)" },
    },
  ],
  [
    "pull start not accepted (agent_unreachable (dispatch)); trying the next-best option",
    {
      pendingCause: "start_not_accepted",
      reasonDetail: { path: "pull", failure: "agent_unreachable (dispatch)" },
    },
  ],
  [cutFailure, { pendingCause: "start_not_accepted", reasonDetail: { note: cutFailure } }],
  [
    "restore start failed in restore; trying the next-best option",
    { pendingCause: "start_failed", reasonDetail: { path: "restore", phase: "restore" } },
  ],
  [
    "lazy start failed; trying the next-best option",
    { pendingCause: "start_failed", reasonDetail: { path: "lazy", phase: null } },
  ],
  [
    "pull start refused before it was sent (image_refused: deployment.imageRef: bad); given up",
    {
      pendingCause: "start_refused",
      reasonDetail: { path: "pull", failure: "image_refused: deployment.imageRef: bad" },
    },
  ],
  [
    "gave up after 4 failed starts",
    { pendingCause: "start_attempts_exhausted", reasonDetail: { attempts: 4 } },
  ],
  ["scaled down", { drainIntent: "scale_down", reasonDetail: {} }],
  ["scaled down: warm pool may park it", { drainIntent: "park_candidate", reasonDetail: {} }],
  ["warm pool: keep-alive over", { drainIntent: "keep_alive_over", reasonDetail: {} }],
  [
    "warm pool: park refused: agent_refused (unknown): replica not running",
    {
      drainIntent: "park_refused",
      reasonDetail: { failure: "agent_refused (unknown): replica not running" },
    },
  ],
  ["node drained", { drainIntent: "node_drained", reasonDetail: {} }],
  ["node lost", { drainIntent: "node_lost", reasonDetail: {} }],
  [
    "stopped by the capture of snapshot 0193a0c4-5d7e-7c1a-9f00-2b4c6d8e0f12",
    {
      drainIntent: "snapshot_captured",
      reasonDetail: { snapshotId: "0193a0c4-5d7e-7c1a-9f00-2b4c6d8e0f12" },
    },
  ],
  ["parked replica no longer on its node", { drainIntent: "vanished_from_node", reasonDetail: {} }],
  ["a sentence no version wrote", { reasonDetail: { note: "a sentence no version wrote" } }],
  [null, { reasonDetail: {} }],
];

describe("the backfill from Replica.pendingReason", () => {
  let t: TestDatabase;
  const ids: string[] = [];

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId } = await seedDemo(t.db);
    const endpoint = await t.db.endpoint.findFirstOrThrow({
      where: { orgId },
      include: { deployments: true },
    });
    // Back to the table as it was before the migration.
    for (const statement of [
      `ALTER TABLE "Replica" DROP COLUMN "pendingCause", DROP COLUMN "drainIntent",
         DROP COLUMN "reasonDetail", ADD COLUMN "pendingReason" TEXT`,
      `DROP TYPE "ReplicaPendingCause"`,
      `DROP TYPE "ReplicaDrainIntent"`,
    ])
      await t.db.$executeRawUnsafe(statement);
    for (const [text] of ROWS) {
      const [row] = await t.db.$queryRaw<{ id: string }[]>`
        INSERT INTO "Replica" (id, "orgId", "endpointId", "deploymentId", state, "updatedAt", "pendingReason")
        VALUES (gen_random_uuid(), ${orgId}::uuid, ${endpoint.id}::uuid,
          ${endpoint.deployments[0]!.id}::uuid, 'stopped', now(), ${text})
        RETURNING id::text`;
      ids.push(row!.id);
    }
    // Statement by statement, split at each semicolon as Prisma's migration runner splits it.
    for (const statement of migrationSql.split(";").map((s) => s.trim()))
      if (statement) await t.db.$executeRawUnsafe(statement);
  });
  afterAll(async () => {
    await t.drop();
  });

  it("gives every wording its cause or intent and its particulars", async () => {
    const rows = await t.db.replica.findMany({
      where: { id: { in: ids } },
      select: { id: true, pendingCause: true, drainIntent: true, reasonDetail: true },
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    ROWS.forEach(([text, expected], i) => {
      expect(byId.get(ids[i]!), String(text)).toEqual({
        id: ids[i],
        pendingCause: null,
        drainIntent: null,
        ...expected,
      });
    });
  });

  it("reads on the dashboard exactly as the text did", async () => {
    const rows = await t.db.replica.findMany({ where: { id: { in: ids } } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    ROWS.forEach(([text], i) => {
      expect(replicaReasonText(byId.get(ids[i]!)!), String(text)).toBe(text);
    });
  });
});
