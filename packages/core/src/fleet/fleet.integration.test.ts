import {
  TEST_AGENT_CALL_PUBLIC_KEY,
  TEST_AGENT_CERT_SHA256,
  TEST_AGENT_NETWORK,
} from "../testing/index.ts";
import { G5_XLARGE_JOIN_FIGURES, IDLE_HEARTBEAT } from "../testing/index.ts";
import { seedDemo } from "@thaw/db/seed";
import { AGENT_PROTOCOL_VERSION } from "@thaw/protocol";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { reconcileEndpoint, replicaReasonText } from "../placement/index.ts";
import {
  authenticateNode,
  createJoinToken,
  drainNode,
  joinNode,
  listNodes,
  markLostNodes,
  recordNodeHeartbeat,
  renewNodeCredential,
  revokeNode,
  rotateNodeCredential,
  type JoinNodeInput,
} from "./index.ts";

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
      agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
      network: TEST_AGENT_NETWORK,
    });
  };

  it("a join token yields exactly one node even when two agents race with it", async () => {
    const { token } = await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db });
    const results = await Promise.allSettled([
      joinNode({
        input: joinInput(token, "racer-1"),
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      }),
      joinNode({
        input: joinInput(token, "racer-2"),
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
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
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
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
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      }),
    ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("refuses an agent of a protocol version it does not speak, naming the field, before the token is spent", async () => {
    const { token, id } = await createJoinToken({
      actor: owner,
      input: { ttlSeconds: 600 },
      db: t.db,
    });
    const join = (protocolVersion: number) =>
      joinNode({
        input: { ...joinInput(token, "next-release"), protocolVersion },
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      });
    await expect(join(AGENT_PROTOCOL_VERSION + 1)).rejects.toMatchObject({
      code: "UNPROCESSABLE",
      details: { field: "protocolVersion" },
    });
    expect((await t.db.joinToken.findUniqueOrThrow({ where: { id } })).usedAt).toBeNull();
    // Upgraded, the same agent joins with the same token.
    expect((await join(AGENT_PROTOCOL_VERSION)).nodeId).toBeTruthy();
  });

  it("only fleet:write may create join tokens", async () => {
    const viewer: Actor = { ...owner, type: "user", role: "viewer" } as Actor;
    await expect(
      createJoinToken({ actor: viewer, input: { ttlSeconds: 600 }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("audits who created a join token, never the token itself", async () => {
    const { token, id } = await createJoinToken({
      actor: owner,
      input: { ttlSeconds: 600 },
      db: t.db,
    });
    const entry = await t.db.auditLog.findFirstOrThrow({
      where: { action: "join_token.created", targetId: id },
    });
    expect(entry).toMatchObject({ actorType: "user", targetType: "join_token" });
    expect(JSON.stringify(entry)).not.toContain(token.split("_").at(-1)!);
  });

  it("heartbeats make a node ready; silence makes it lost; a new heartbeat brings it back", async () => {
    const joined = await joinWithNewToken("beater");
    const actor = await authenticateNode({
      credential: joined.credential,
      db: t.db,
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

  it("keeps the host's CRIU restore workers as reported, and an older agent's silence as unknown", async () => {
    const joined = await joinWithNewToken("criu-workers");
    const stored = () =>
      t.db.node.findUniqueOrThrow({
        where: { id: joined.nodeId },
        select: { restoreStreams: true },
      });
    expect((await stored()).restoreStreams).toBeNull();
    const actor = await authenticateNode({ credential: joined.credential, db: t.db });
    await recordNodeHeartbeat({
      actor,
      input: { ...beat, figures: { ...figures, restoreStreams: 8 } },
      db: t.db,
    });
    expect((await stored()).restoreStreams).toBe(8);
    // A heartbeat without the figure leaves it as it was.
    await recordNodeHeartbeat({ actor, input: { ...beat, figures }, db: t.db });
    expect((await stored()).restoreStreams).toBe(8);
  });

  it("keeps whether the host's engines use a GPU Memory Service as its agent last reported", async () => {
    const joined = await joinWithNewToken("gms");
    const stored = async () =>
      (
        await t.db.node.findUniqueOrThrow({
          where: { id: joined.nodeId },
          select: { gpuMemoryService: true },
        })
      ).gpuMemoryService;
    expect(await stored()).toBe(false);
    const actor = await authenticateNode({ credential: joined.credential, db: t.db });
    await recordNodeHeartbeat({
      actor,
      input: { ...beat, figures: { ...figures, gpuMemoryService: true } },
      db: t.db,
    });
    expect(await stored()).toBe(true);
    // A capability, not a measurement: an agent that stops reporting it no longer has it.
    await recordNodeHeartbeat({ actor, input: { ...beat, figures }, db: t.db });
    expect(await stored()).toBe(false);
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
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
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
    });
    expect(actor.nodeId).toBe(first.nodeId);
    // A host that lost its credential joins with a token an admin made for its node.
    const recovered = await join(await token(first.nodeId));
    expect(recovered.nodeId).toBe(first.nodeId);
    expect(await t.db.node.count({ where: { instanceId: "i-0rejoin" } })).toBe(1);
  });

  it("two joins get two random credentials, kept only as hashes, with the scheduler's public key", async () => {
    const a = await joinWithNewToken("random-a");
    const b = await joinWithNewToken("random-b");
    expect(a.credential).toMatch(/^thawnode_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(a.credential).not.toBe(b.credential);
    expect(a.agentCallPublicKey).toBe(TEST_AGENT_CALL_PUBLIC_KEY);
    const rows = await t.db.node.findMany({ where: { id: { in: [a.nodeId, b.nodeId] } } });
    expect(JSON.stringify(rows)).not.toContain(a.credential);
    expect(JSON.stringify(rows)).not.toContain(b.credential);
    // Joining again as the same node (with its credential) issues yet another one.
    const token = (await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db }))
      .token;
    const instance = { instanceId: "i-0random", name: "random-c" };
    const c1 = await joinNode({
      input: { ...joinInput(token), ...instance },
      db: t.db,
      agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
      network: TEST_AGENT_NETWORK,
    });
    const again = (await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db }))
      .token;
    const c2 = await joinNode({
      input: { ...joinInput(again), ...instance, nodeCredential: c1.credential },
      db: t.db,
      agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
      network: TEST_AGENT_NETWORK,
    });
    expect(c2.nodeId).toBe(c1.nodeId);
    expect(c2.credential).not.toBe(c1.credential);
    await expect(authenticateNode({ credential: c1.credential, db: t.db })).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });
    expect((await authenticateNode({ credential: c2.credential, db: t.db })).nodeId).toBe(
      c1.nodeId,
    );
  });

  it("an agent URL is https with its certificate's SHA-256, or the join is refused naming the field", async () => {
    const join = async (extra: Partial<JoinNodeInput>) => {
      const { token } = await createJoinToken({
        actor: owner,
        input: { ttlSeconds: 600 },
        db: t.db,
      });
      return joinNode({
        input: { ...joinInput(token, "tls"), ...extra },
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      });
    };
    await expect(
      join({ agentUrl: "http://127.0.0.1:7070", agentCertSha256: TEST_AGENT_CERT_SHA256 }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", details: { field: "agentUrl" } });
    await expect(join({ agentUrl: "https://127.0.0.1:7070" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      details: { field: "agentCertSha256" },
    });
    const joined = await join({
      agentUrl: "https://127.0.0.1:7070",
      agentCertSha256: TEST_AGENT_CERT_SHA256,
    });
    const node = await t.db.node.findUniqueOrThrow({ where: { id: joined.nodeId } });
    expect(node).toMatchObject({
      agentUrl: "https://127.0.0.1:7070",
      agentCertSha256: TEST_AGENT_CERT_SHA256,
    });
  });

  it("another org's instance id is refused exactly like this org's (no telling which exist)", async () => {
    const other = await t.db.org.create({ data: { slug: "elsewhere", name: "Elsewhere" } });
    const otherOwner: Actor = {
      type: "user",
      userId: "u-elsewhere",
      orgId: other.id,
      role: "owner",
    };
    const tokenOf = async (actor: Actor) =>
      (await createJoinToken({ actor, input: { ttlSeconds: 600 }, db: t.db })).token;
    const join = (joinToken: string, instanceId: string) =>
      joinNode({
        input: { ...joinInput(joinToken, "prober"), instanceId },
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      });
    await join(await tokenOf(otherOwner), "i-0theirs");
    await join(await tokenOf(owner), "i-0ours");
    const refusal = async (instanceId: string) => {
      const error = (await join(await tokenOf(owner), instanceId).catch((e: unknown) => e)) as {
        code: string;
        message: string;
        details: unknown;
      };
      return {
        code: error.code,
        message: error.message.replace(instanceId, "<id>"),
        details: error.details,
      };
    };
    const theirs = await refusal("i-0theirs");
    expect(theirs).toMatchObject({ code: "CONFLICT", details: { field: "instanceId" } });
    expect(theirs).toEqual(await refusal("i-0ours"));
    expect(theirs.message).not.toMatch(/org|prober/);
  });

  it("a changed certificate on joining again needs the node's credential or a token for it, and is audited", async () => {
    const token = async (nodeId?: string) =>
      (
        await createJoinToken({
          actor: owner,
          input: { ttlSeconds: 600, ...(nodeId ? { nodeId } : {}) },
          db: t.db,
        })
      ).token;
    const join = (joinToken: string, pin: string, nodeCredential?: string) =>
      joinNode({
        input: {
          ...joinInput(joinToken, "pinned"),
          instanceId: "i-0pinned",
          agentUrl: "https://127.0.0.1:7443",
          agentCertSha256: pin,
          ...(nodeCredential ? { nodeCredential } : {}),
        },
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      });
    const first = await join(await token(), "1".repeat(64));
    const pinOf = async () =>
      (await t.db.node.findUniqueOrThrow({ where: { id: first.nodeId } })).agentCertSha256;
    // An impostor's certificate with a spare token: refused, and the pin stays.
    await expect(join(await token(), "2".repeat(64))).rejects.toMatchObject({
      code: "CONFLICT",
    });
    await expect(
      join(await token(), "2".repeat(64), "thawnode_000000000000_notthenodescredentialxx"),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await pinOf()).toBe("1".repeat(64));
    // The node itself (its credential), or a token made for it, may change it: audited.
    const second = await join(await token(), "3".repeat(64), first.credential);
    expect(await pinOf()).toBe("3".repeat(64));
    await join(await token(first.nodeId), "4".repeat(64));
    expect(await pinOf()).toBe("4".repeat(64));
    const audits = await t.db.auditLog.findMany({
      where: { targetId: first.nodeId, action: { in: ["node.joined", "node.rejoined"] } },
      orderBy: { createdAt: "asc" },
    });
    expect(audits.map((a) => a.metadata)).toEqual([
      expect.objectContaining({ agentCertSha256: "1".repeat(64), provedBy: "new_node" }),
      expect.objectContaining({
        agentCertSha256: "3".repeat(64),
        previousAgentCertSha256: "1".repeat(64),
        certificateChanged: true,
        provedBy: "node_credential",
      }),
      expect.objectContaining({
        agentCertSha256: "4".repeat(64),
        previousAgentCertSha256: "3".repeat(64),
        provedBy: "join_token_for_node",
      }),
    ]);
    expect(second.nodeId).toBe(first.nodeId);
  });

  it("a revoked node's credential is refused everywhere; only a token made for it lets its host back", async () => {
    const joined = await joinWithNewToken("revoked");
    const actor = await authenticateNode({ credential: joined.credential, db: t.db });
    await recordNodeHeartbeat({ actor, input: beat, db: t.db });
    const pending = await renewNodeCredential({ actor, db: t.db });

    const viewer: Actor = { ...owner, role: "viewer" } as Actor;
    await expect(
      revokeNode({ actor: viewer, input: { node: joined.nodeId }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const other = await t.db.org.create({ data: { slug: "not-yours", name: "Not yours" } });
    const stranger: Actor = { type: "user", userId: "x", orgId: other.id, role: "owner" };
    await expect(
      revokeNode({ actor: stranger, input: { node: joined.nodeId }, db: t.db }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });

    const { result: revoked } = await revokeNode({
      actor: owner,
      input: { node: "revoked" },
      db: t.db,
    });
    expect(revoked.nodeId).toBe(joined.nodeId);
    for (const credential of [joined.credential, pending.credential])
      await expect(authenticateNode({ credential, db: t.db })).rejects.toMatchObject({
        code: "UNAUTHENTICATED",
      });
    const node = await t.db.node.findUniqueOrThrow({ where: { id: joined.nodeId } });
    expect(node).toMatchObject({ state: "draining", credentialHash: null });
    expect(node.credentialRevokedAt).not.toBeNull();
    await expect(
      rotateNodeCredential({ actor: owner, input: { node: joined.nodeId }, db: t.db }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const bound = await createJoinToken({
      actor: owner,
      input: { ttlSeconds: 600, nodeId: joined.nodeId },
      db: t.db,
    });
    const back = await joinNode({
      input: joinInput(bound.token, "revoked"),
      db: t.db,
      agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
      network: TEST_AGENT_NETWORK,
    });
    expect(back.nodeId).toBe(joined.nodeId);
    expect((await authenticateNode({ credential: back.credential, db: t.db })).nodeId).toBe(
      joined.nodeId,
    );
    const audit = await t.db.auditLog.findFirstOrThrow({
      where: { action: "node.revoked", targetId: joined.nodeId },
    });
    expect(audit).toMatchObject({
      actorType: "user",
      actorId: owner.type === "user" ? owner.userId : null,
    });
  });

  it("a revoked instance cannot join again with its old credential", async () => {
    const { token } = await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db });
    const input = { ...joinInput(token, "revoked-instance"), instanceId: "i-0revoked" };
    const joined = await joinNode({
      input,
      db: t.db,
      agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
      network: TEST_AGENT_NETWORK,
    });
    await revokeNode({ actor: owner, input: { node: "i-0revoked" }, db: t.db });
    const spare = await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db });
    await expect(
      joinNode({
        input: { ...input, joinToken: spare.token, nodeCredential: joined.credential },
        db: t.db,
        agentCallPublicKey: TEST_AGENT_CALL_PUBLIC_KEY,
        network: TEST_AGENT_NETWORK,
      }),
    ).rejects.toMatchObject({ code: "CONFLICT", details: { field: "instanceId" } });
  });

  it("rotation: the heartbeat asks, the agent fetches a new credential, and its first use retires the old", async () => {
    const joined = await joinWithNewToken("rotating");
    const actor = await authenticateNode({ credential: joined.credential, db: t.db });
    expect((await recordNodeHeartbeat({ actor, input: beat, db: t.db })).rotateCredential).toBe(
      false,
    );
    const member: Actor = { ...owner, role: "member" } as Actor;
    await expect(
      rotateNodeCredential({ actor: member, input: { node: joined.nodeId }, db: t.db }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await rotateNodeCredential({ actor: owner, input: { node: joined.nodeId }, db: t.db });
    expect((await recordNodeHeartbeat({ actor, input: beat, db: t.db })).rotateCredential).toBe(
      true,
    );
    // An answer lost on the way: the old credential still works, and asking again is fine.
    await renewNodeCredential({ actor, db: t.db });
    const renewed = await renewNodeCredential({ actor, db: t.db });
    expect(renewed.credential).not.toBe(joined.credential);
    expect((await authenticateNode({ credential: joined.credential, db: t.db })).nodeId).toBe(
      joined.nodeId,
    );
    // First use of the new one: it is the node's only credential from now on.
    const next = await authenticateNode({ credential: renewed.credential, db: t.db });
    expect(next.nodeId).toBe(joined.nodeId);
    await expect(
      authenticateNode({ credential: joined.credential, db: t.db }),
    ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    expect(
      (await recordNodeHeartbeat({ actor: next, input: beat, db: t.db })).rotateCredential,
    ).toBe(false);
    const actions = (
      await t.db.auditLog.findMany({
        where: { targetId: joined.nodeId, action: { startsWith: "node.credential" } },
        orderBy: { createdAt: "asc" },
      })
    ).map((a) => a.action);
    expect(actions).toEqual(["node.credential_rotation_requested", "node.credential_rotated"]);
  });

  it("drain: nothing new is placed on the node, and reconciling replaces its replicas elsewhere", async () => {
    const joined = await joinWithNewToken("drained");
    const actor = await authenticateNode({ credential: joined.credential, db: t.db });
    await recordNodeHeartbeat({ actor, input: beat, db: t.db });
    const deployment = await t.db.deployment.findFirstOrThrow({
      where: { orgId: owner.orgId, endpoint: { slug: "llama-3-2-1b-gguf" } },
    });
    await t.db.endpoint.update({
      where: { id: deployment.endpointId },
      data: { desiredReplicas: 1, activeDeploymentId: deployment.id },
    });
    const replica = await t.db.replica.create({
      data: {
        orgId: owner.orgId,
        endpointId: deployment.endpointId,
        deploymentId: deployment.id,
        nodeId: joined.nodeId,
        state: "ready",
      },
    });
    const { result: drained, followUps } = await drainNode({
      actor: owner,
      input: { node: joined.nodeId },
      db: t.db,
    });
    expect(drained.endpointIds).toEqual([deployment.endpointId]);
    // Reconciling the endpoint follows, so its replica is replaced elsewhere.
    expect(followUps).toEqual([
      { queue: "reconcile", payload: { endpointId: deployment.endpointId } },
    ]);
    // A heartbeat does not undo an operator's drain, and the credential still works.
    await recordNodeHeartbeat({ actor, input: beat, db: t.db });
    expect((await t.db.node.findUniqueOrThrow({ where: { id: joined.nodeId } })).state).toBe(
      "draining",
    );
    const result = await reconcileEndpoint({ db: t.db, endpointId: deployment.endpointId });
    const moved = await t.db.replica.findUniqueOrThrow({ where: { id: replica.id } });
    expect(moved).toMatchObject({ state: "draining", drainIntent: "node_drained" });
    expect(replicaReasonText(moved)).toBe("node drained");
    expect(result.created).toHaveLength(1);
    expect(
      await t.db.auditLog.count({ where: { action: "node.drained", targetId: joined.nodeId } }),
    ).toBe(1);
    await t.db.replica.deleteMany({ where: { endpointId: deployment.endpointId } });
    await t.db.endpoint.update({
      where: { id: deployment.endpointId },
      data: { desiredReplicas: 0 },
    });
  });

  it("a node's credential cannot be guessed from its id and a wrong one is refused", async () => {
    await expect(
      authenticateNode({
        credential: "thawnode_000000000000_wrongwrongwrongwrongwrong",
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    await expect(authenticateNode({ credential: null, db: t.db })).rejects.toMatchObject({
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
    expect(forgotten.drainIntent).toBe("vanished_from_node");
    expect(replicaReasonText(forgotten)).toMatch(/no longer on its node/);
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
