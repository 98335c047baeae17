import { TEST_AGENT_CALL_PUBLIC_KEY, TEST_AGENT_NETWORK } from "../testing/index.ts";
import { G5_XLARGE_JOIN_FIGURES, IDLE_HEARTBEAT } from "../testing/index.ts";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinNode, recordNodeHeartbeat, type JoinNodeInput } from "../fleet/index.ts";
import { replicaReasonData, type ReplicaReason } from "../placement/replica-reason.ts";
import {
  beginHostLaunch,
  beginHostRetirement,
  listFleetOrgs,
  loadFleetSnapshot,
  markHostsTerminated,
  recordHostLaunch,
} from "./index.ts";
import {
  effectiveDiskFigures,
  NODE_DISK_COLUMNS_SELECT,
} from "../scheduling/effective-disk-figures.ts";
import type { Offering } from "./plan-fleet-change.ts";

// The fleet worker's database side: a launched host joins as the row made for it, the
// snapshot the planner sees, and a retirement that yields to placement.

const A10G: Offering = {
  instanceType: "g5.xlarge",
  zone: "sim-a",
  gpuModel: "A10G",
  gpusPerHost: 1,
  priceUsdPerHour: 1.006,
};
const join = (joinToken: string, instanceId: string): JoinNodeInput => ({
  joinToken,
  name: `cloud-${instanceId}`,
  provider: "sim",
  runtime: "sim",
  instanceId,
  zone: "sim-a",
  agentVersion: "test",
  figures: G5_XLARGE_JOIN_FIGURES,
});
const beat = IDLE_HEARTBEAT;

describe("fleet provisioning in Postgres", () => {
  let t: TestDatabase;
  let orgId: string;
  let endpointId: string;
  let deploymentId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    ({ orgId } = await seedDemo(t.db));
    const endpoint = await t.db.endpoint.findFirstOrThrow({
      where: { orgId, slug: "llama-3-2-1b-gguf" },
      include: { deployments: true },
    });
    endpointId = endpoint.id;
    deploymentId = endpoint.deployments[0]!.id;
  });
  afterAll(async () => {
    await t.drop();
  });

  const launchAndJoin = async () => {
    const { nodeId, joinToken } = await beginHostLaunch({
      db: t.db,
      orgId,
      provider: "sim",
      offering: A10G,
      tokenTtlSeconds: 600,
      reason: "test",
    });
    await recordHostLaunch({
      db: t.db,
      nodeId,
      outcome: {
        kind: "launched",
        instanceId: `sim-${nodeId}`,
        instanceType: "g5.xlarge",
        zone: "sim-a",
        priceUsdPerHour: 1.006,
      },
    });
    const joined = await joinNode({
      input: join(joinToken, `sim-${nodeId}`),
      db: t.db,
      agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
      network: TEST_AGENT_NETWORK,
    });
    return { nodeId, joined };
  };

  const pendingBecause = (reason: ReplicaReason) => ({
    orgId,
    endpointId,
    deploymentId,
    state: "pending" as const,
    ...replicaReasonData(reason),
  });

  it("counts replicas that wait for a host by their cause, not one placement has yet to retry", async () => {
    // Sent back to pending after a failed start: placement tries the next-best option first.
    await t.db.replica.createMany({
      data: [
        pendingBecause({ pendingCause: "start_failed", path: "pull", phase: "pull" }),
        pendingBecause({ pendingCause: "start_not_accepted", path: "pull", failure: "refused" }),
      ],
    });
    expect((await loadFleetSnapshot({ db: t.db, orgId, provider: "sim" })).pending).toEqual([]);
    expect(await listFleetOrgs({ db: t.db, provider: "sim" })).not.toContain(orgId);

    await t.db.replica.createMany({
      data: [
        pendingBecause({
          pendingCause: "waiting_for_capacity",
          infeasible: [{ reason: "no snapshot of this deployment", count: 2 }],
        }),
        pendingBecause({
          pendingCause: "host_launch_blocked",
          gpuModel: "A10G",
          blockedBy: "spend cap $1/h reached ($1.01/h running)",
        }),
      ],
    });
    expect((await loadFleetSnapshot({ db: t.db, orgId, provider: "sim" })).pending).toEqual([
      { gpuModel: "A10G", gpus: 2 },
    ]);
    expect(await listFleetOrgs({ db: t.db, provider: "sim" })).toContain(orgId);
    await t.db.replica.deleteMany({ where: { endpointId } });
  });

  it("counts the GPUs wanted by replicas placement could not place, net of free ones", async () => {
    await t.db.replica.createMany({
      data: [1, 2, 3].map(() =>
        pendingBecause({ pendingCause: "waiting_for_capacity", gpus: 1, gpuType: "A10G" }),
      ),
    });
    // One more, not tried by placement yet: not demand.
    await t.db.replica.create({ data: { orgId, endpointId, deploymentId, state: "pending" } });
    const before = await loadFleetSnapshot({ db: t.db, orgId, provider: "sim" });
    expect(before.pending).toEqual([{ gpuModel: "A10G", gpus: 3 }]);
    expect(before.hosts).toEqual([]);

    const { nodeId, joined } = await launchAndJoin();
    expect(joined.nodeId).toBe(nodeId);
    const node = await t.db.node.findUniqueOrThrow({ where: { id: nodeId } });
    expect(node).toMatchObject({
      provisioned: true,
      state: "booting",
      instanceId: `sim-${nodeId}`,
      name: `cloud-sim-${nodeId}`,
    });
    await recordNodeHeartbeat({ db: t.db, actor: { type: "node", nodeId, orgId }, input: beat });
    const after = await loadFleetSnapshot({ db: t.db, orgId, provider: "sim" });
    // The ready host's free GPU will be taken by the next placement: two are still wanted.
    expect(after.pending).toEqual([{ gpuModel: "A10G", gpus: 2 }]);
    expect(after.hosts).toEqual([
      expect.objectContaining({
        nodeId,
        state: "ready",
        gpus: 1,
        replicas: 0,
        priceUsdPerHour: 1.006,
      }),
    ]);
    await t.db.replica.deleteMany({ where: { endpointId } });
  });

  it("keeps the volume the provider provisioned, then what the host measured on it", async () => {
    const { nodeId, joinToken } = await beginHostLaunch({
      db: t.db,
      orgId,
      provider: "sim",
      offering: A10G,
      tokenTtlSeconds: 600,
      reason: "test",
    });
    const launched = {
      kind: "launched" as const,
      instanceId: `sim-${nodeId}`,
      instanceType: "g5.xlarge",
      zone: "sim-a",
      priceUsdPerHour: 1.006,
    };
    await recordHostLaunch({
      db: t.db,
      nodeId,
      outcome: { ...launched, volume: { throughputMiBps: 1000, iops: 16000 } },
    });
    const disk = () =>
      t.db.node.findUniqueOrThrow({
        where: { id: nodeId },
        select: {
          ...NODE_DISK_COLUMNS_SELECT,
          volumeIops: true,
          diskMeasuredAt: true,
        },
      });
    expect(effectiveDiskFigures(await disk())).toEqual({
      readMiBps: 1000,
      writeMiBps: 1000,
      source: "provisioned",
    });
    expect((await disk()).volumeIops).toBe(16000);

    const measuredAt = "2026-11-26T17:00:00.000Z";
    const joined = await joinNode({
      input: {
        ...join(joinToken, `sim-${nodeId}`),
        figures: {
          ...G5_XLARGE_JOIN_FIGURES,
          measuredDisk: { readMiBps: 1010, writeMiBps: 990, measuredAt },
        },
      },
      db: t.db,
      agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
      network: TEST_AGENT_NETWORK,
    });
    expect(effectiveDiskFigures(await disk())).toEqual({
      readMiBps: 1010,
      writeMiBps: 990,
      source: "measured",
    });
    expect((await disk()).diskMeasuredAt?.toISOString()).toBe(measuredAt);
    // A heartbeat without a measurement (an agent restarted with the probe off) keeps it.
    await recordNodeHeartbeat({
      actor: { type: "node", nodeId: joined.nodeId, orgId },
      input: beat,
      db: t.db,
    });
    expect((await disk()).measuredDiskWriteMiBps).toBe(990);
  });

  it("refuses the join of a host whose node was terminated, spending its token like any join", async () => {
    const { nodeId, joinToken } = await beginHostLaunch({
      db: t.db,
      orgId,
      provider: "sim",
      offering: A10G,
      tokenTtlSeconds: 600,
      reason: "test",
    });
    await markHostsTerminated({ db: t.db, hosts: [{ nodeId, reason: "did not join" }] });
    await expect(
      joinNode({
        input: join(joinToken, `sim-${nodeId}`),
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    // A token is single use whatever the answer: a refusal that left it unspent told a
    // prober the token was good (issue 23, finding 6).
    expect((await t.db.joinToken.findFirstOrThrow({ where: { nodeId } })).usedAt).not.toBeNull();
    expect((await t.db.node.findUniqueOrThrow({ where: { id: nodeId } })).state).toBe("terminated");
  });

  it("retires only a host that holds nothing, and never one placement has just used", async () => {
    const { nodeId } = await launchAndJoin();
    await recordNodeHeartbeat({ db: t.db, actor: { type: "node", nodeId, orgId }, input: beat });
    const replica = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, nodeId, state: "placed" },
    });
    await t.db.gpuReservation.create({ data: { nodeId, gpuIndex: 0, replicaId: replica.id } });
    expect(await beginHostRetirement({ db: t.db, nodeId, reason: "idle" })).toBeNull();
    expect((await t.db.node.findUniqueOrThrow({ where: { id: nodeId } })).state).toBe("ready");

    await t.db.gpuReservation.deleteMany({ where: { nodeId } });
    await t.db.replica.update({ where: { id: replica.id }, data: { state: "stopped" } });
    expect(await beginHostRetirement({ db: t.db, nodeId, reason: "idle" })).toEqual({
      instanceId: `sim-${nodeId}`,
      orgId,
    });
    expect(await t.db.node.findUniqueOrThrow({ where: { id: nodeId } })).toMatchObject({
      state: "draining",
      stateReason: "idle",
    });
    // A second retirement (a retried job) finds it no longer ready and does nothing.
    expect(await beginHostRetirement({ db: t.db, nodeId, reason: "idle" })).toBeNull();
  });
});
