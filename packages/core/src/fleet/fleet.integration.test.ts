import { TEST_AGENT_NETWORK } from "../testing/index.ts";
import { G5_XLARGE_JOIN_FIGURES, IDLE_HEARTBEAT } from "../testing/index.ts";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import {
  authenticateNode,
  createJoinToken,
  joinNode,
  listNodes,
  markLostNodes,
  recordNodeHeartbeat,
  type JoinNodeInput,
} from "./index.ts";

const TEST_NODE_SECRET = "test-node-credential-secret-32-chars-long";

const figures: JoinNodeInput["figures"] = G5_XLARGE_JOIN_FIGURES;
const joinInput = (joinToken: string, name = "node-a"): JoinNodeInput => ({
  joinToken,
  name,
  provider: "sim",
  runtime: "sim",
  agentVersion: "test",
  figures,
});
const beat = IDLE_HEARTBEAT;

describe("node join and heartbeats", () => {
  let t: TestDatabase;
  let owner: Actor;
  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId, userId } = await seedDemo(t.db);
    owner = { type: "user", userId, orgId, role: "owner" };
  });
  afterAll(async () => {
    await t.drop();
  });
  const joinWithNewToken = async (name: string) => {
    const { token } = await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db });
    return joinNode({
      input: joinInput(token, name),
      db: t.db,
      credentialSecret: TEST_NODE_SECRET,
      network: TEST_AGENT_NETWORK,
    });
  };

  it("a join token yields exactly one node even when two agents race with it", async () => {
    const { token } = await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db });
    const results = await Promise.allSettled([
      joinNode({
        input: joinInput(token, "racer-1"),
        db: t.db,
        credentialSecret: TEST_NODE_SECRET,
        network: TEST_AGENT_NETWORK,
      }),
      joinNode({
        input: joinInput(token, "racer-2"),
        db: t.db,
        credentialSecret: TEST_NODE_SECRET,
        network: TEST_AGENT_NETWORK,
      }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await t.db.node.count({ where: { name: { startsWith: "racer-" } } })).toBe(1);
    const stored = await t.db.joinToken.findFirstOrThrow({ where: { usedAt: { not: null } } });
    expect(stored.tokenHash).not.toContain(token);
  });

  it("refuses expired and unknown tokens with UNAUTHENTICATED naming joinToken", async () => {
    const { token, id } = await createJoinToken({
      actor: owner,
      input: { ttlSeconds: 600 },
      db: t.db,
    });
    await t.db.joinToken.update({
      where: { id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    await expect(
      joinNode({
        input: joinInput(token),
        db: t.db,
        credentialSecret: TEST_NODE_SECRET,
        network: TEST_AGENT_NETWORK,
      }),
    ).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
      details: { field: "joinToken" },
    });
    await expect(
      joinNode({
        input: joinInput("thawjoin_000000000000_notarealtokenatallxxxx"),
        db: t.db,
        credentialSecret: TEST_NODE_SECRET,
        network: TEST_AGENT_NETWORK,
      }),
    ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("only fleet:write may create join tokens", async () => {
    const viewer: Actor = { ...owner, type: "user", role: "viewer" } as Actor;
    await expect(
      createJoinToken({ actor: viewer, input: { ttlSeconds: 600 }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("heartbeats make a node ready; silence makes it lost; a new heartbeat brings it back", async () => {
    const joined = await joinWithNewToken("beater");
    const actor = await authenticateNode({
      credential: joined.credential,
      db: t.db,
      credentialSecret: TEST_NODE_SECRET,
    });
    expect(actor.nodeId).toBe(joined.nodeId);

    await recordNodeHeartbeat({ actor, input: beat, db: t.db });
    let node = await t.db.node.findUniqueOrThrow({ where: { id: joined.nodeId } });
    expect(node.state).toBe("ready");

    const later = new Date(Date.now() + 60_000);
    expect(await markLostNodes({ db: t.db, now: later, graceSeconds: 30 })).toBeGreaterThanOrEqual(
      1,
    );
    node = await t.db.node.findUniqueOrThrow({ where: { id: joined.nodeId } });
    expect(node.state).toBe("lost");
    expect(node.stateReason).toMatch(/no heartbeat/);

    await recordNodeHeartbeat({ actor, input: beat, db: t.db });
    node = await t.db.node.findUniqueOrThrow({ where: { id: joined.nodeId } });
    expect(node.state).toBe("ready");

    const listed = await listNodes({ actor: owner, db: t.db });
    expect(listed.find((n) => n.id === joined.nodeId)).toMatchObject({
      state: "ready",
      stale: false,
      gpuCount: 1,
    });
  });

  it("an instance joins again only as itself: with its credential, or a token made for its node", async () => {
    const token = async (nodeId?: string) =>
      (
        await createJoinToken({
          actor: owner,
          input: { ttlSeconds: 600, ...(nodeId ? { nodeId } : {}) },
          db: t.db,
        })
      ).token;
    const join = async (joinToken: string, nodeCredential?: string) =>
      joinNode({
        input: {
          ...joinInput(joinToken, "rejoiner"),
          instanceId: "i-0rejoin",
          ...(nodeCredential ? { nodeCredential } : {}),
        },
        db: t.db,
        credentialSecret: TEST_NODE_SECRET,
        network: TEST_AGENT_NETWORK,
      });
    const first = await join(await token());

    // A spare token and the instance id (shown as the node's name) no longer take it over,
    // and the refusal spends the token like any join (no oracle).
    const spare = await token();
    await expect(join(spare)).rejects.toMatchObject({
      code: "CONFLICT",
      details: { field: "instanceId" },
    });
    await expect(join(spare, first.credential)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    await expect(
      join(await token(), "thawnode_000000000000_notthenodescredential"),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });

    // The node's own credential proves it: the same node, a working credential.
    const again = await join(await token(), first.credential);
    expect(again.nodeId).toBe(first.nodeId);
    const actor = await authenticateNode({
      credential: again.credential,
      db: t.db,
      credentialSecret: TEST_NODE_SECRET,
    });
    expect(actor.nodeId).toBe(first.nodeId);
    // A host that lost its credential joins with a token an admin made for its node.
    const recovered = await join(await token(first.nodeId));
    expect(recovered.nodeId).toBe(first.nodeId);
    expect(await t.db.node.count({ where: { instanceId: "i-0rejoin" } })).toBe(1);
  });

  it("refuses a credential issued under another secret (rotated), so the agent joins again", async () => {
    const joined = await joinWithNewToken("rotated");
    await expect(
      authenticateNode({
        credential: joined.credential,
        db: t.db,
        credentialSecret: "another-node-credential-secret-32-chars",
      }),
    ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("a node's credential cannot be guessed from its id and a wrong one is refused", async () => {
    await expect(
      authenticateNode({
        credential: "thawnode_000000000000_wrongwrongwrongwrongwrong",
        db: t.db,
        credentialSecret: TEST_NODE_SECRET,
      }),
    ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    await expect(
      authenticateNode({ credential: null, db: t.db, credentialSecret: TEST_NODE_SECRET }),
    ).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });
  });

  it("forgets a parked replica its node no longer holds (the agent restarted), after a grace", async () => {
    const joined = await joinWithNewToken("restarted");
    const actor: Actor = { type: "node", nodeId: joined.nodeId, orgId: owner.orgId };
    const deployment = await t.db.deployment.findFirstOrThrow({
      where: { orgId: owner.orgId, endpoint: { slug: "llama-3-2-1b-gguf" } },
    });
    const parked = async (parkedAt: Date) => {
      const replica = await t.db.replica.create({
        data: {
          orgId: owner.orgId,
          endpointId: deployment.endpointId,
          deploymentId: deployment.id,
          nodeId: joined.nodeId,
          state: "warm",
          updatedAt: parkedAt,
        },
      });
      await t.db.gpuReservation.deleteMany({ where: { nodeId: joined.nodeId } });
      await t.db.gpuReservation.create({
        data: { nodeId: joined.nodeId, gpuIndex: 0, replicaId: replica.id },
      });
      return replica;
    };
    const vanished = await parked(new Date(Date.now() - 60_000));
    await recordNodeHeartbeat({ actor, input: beat, db: t.db });
    const forgotten = await t.db.replica.findUniqueOrThrow({ where: { id: vanished.id } });
    expect(forgotten.state).toBe("stopped");
    expect(forgotten.pendingReason).toMatch(/no longer on its node/);
    expect(await t.db.gpuReservation.count({ where: { replicaId: vanished.id } })).toBe(0);

    // Parked just now: a heartbeat assembled before the park may still be in flight.
    const fresh = await parked(new Date());
    await recordNodeHeartbeat({ actor, input: beat, db: t.db });
    expect((await t.db.replica.findUniqueOrThrow({ where: { id: fresh.id } })).state).toBe("warm");
    // And one the agent reports is kept whatever its age.
    await t.db.replica.update({
      where: { id: fresh.id },
      data: { updatedAt: new Date(Date.now() - 60_000) },
    });
    await recordNodeHeartbeat({
      actor,
      input: { ...beat, inventory: { ...beat.inventory, warmReplicaIds: [fresh.id] } },
      db: t.db,
    });
    expect((await t.db.replica.findUniqueOrThrow({ where: { id: fresh.id } })).state).toBe("warm");
  });

  it("lists what each node holds by endpoint and version: replicas, snapshots, cached images", async () => {
    const { nodeId } = await joinWithNewToken("holder");
    const deployment = await t.db.deployment.findFirstOrThrow({
      where: { orgId: owner.orgId, endpoint: { slug: "llama-3-2-1b-gguf" } },
    });
    await t.db.nodeImage.create({
      data: { nodeId, digest: deployment.imageDigest, bytes: 2_400_000_000n },
    });
    await t.db.nodeImage.create({ data: { nodeId, digest: "sha256:unknown", bytes: 1n } });
    await t.db.replica.create({
      data: {
        orgId: owner.orgId,
        endpointId: deployment.endpointId,
        deploymentId: deployment.id,
        nodeId,
        state: "warm",
      },
    });
    const snapshot = await t.db.snapshot.create({
      data: {
        orgId: owner.orgId,
        deploymentId: deployment.id,
        gpuModel: "A10G",
        driverVersion: "550",
        cudaVersion: "12.4",
        location: "node",
        uri: "file:///snap",
        bytes: 3_400_000_000n,
        status: "ready",
      },
    });
    await t.db.nodeSnapshot.create({ data: { nodeId, snapshotId: snapshot.id } });

    const node = (await listNodes({ actor: owner, db: t.db })).find((n) => n.id === nodeId)!;
    expect(node.holds).toEqual({
      replicas: [{ endpoint: "llama-3-2-1b-gguf", state: "warm" }],
      snapshots: [
        {
          label: `llama-3-2-1b-gguf v${deployment.version}`,
          status: "ready",
          bytes: 3_400_000_000,
        },
      ],
      images: expect.arrayContaining([
        { label: `llama-3-2-1b-gguf v${deployment.version}`, bytes: 2_400_000_000, estargz: false },
        { label: "sha256:unknown", bytes: 1, estargz: false },
      ]) as unknown,
    });
  });

  it("another org's user sees none of this org's nodes", async () => {
    const other = await t.db.org.create({ data: { slug: "other", name: "Other" } });
    const stranger: Actor = { type: "user", userId: "x", orgId: other.id, role: "owner" };
    expect(await listNodes({ actor: stranger, db: t.db })).toEqual([]);
  });
});
