import type { DbClient } from "@thaw/db";
import {
  agentProtocolVersionProblem,
  HEARTBEAT_INTERVAL_SECONDS,
  type JoinRequest,
} from "@thaw/protocol";
import {
  hashesEqual,
  issuePrefixedSecret,
  parsePrefixedSecret,
  sha256Hex,
} from "../crypto/secrets.ts";
import { AppError } from "../errors/index.ts";
import { agentUrlProblem, type AgentNetwork } from "./agent-address.ts";
import { JOIN_TOKEN_KIND } from "./create-join-token.ts";
import { memoryBytesOf } from "./host-memory.ts";
import { measuredDiskColumns } from "./measured-disk-columns.ts";

export const NODE_CREDENTIAL_KIND = "thawnode";
export { HEARTBEAT_INTERVAL_SECONDS };

/** A join as the agent protocol's JoinRequest parses it. */
export type JoinNodeInput = JoinRequest;

/**
 * Exchanges a one-time join token for a node and a new random credential, returned once
 * (only its SHA-256 is kept), with the scheduler's public key that signs calls to the agent.
 * The token is claimed first, in a transaction of its own, with a conditional update (two
 * agents racing with one token get one claim), and stays spent whatever follows: a refusal
 * must not tell a prober that the token was good. An instance that joined before may join
 * again only as itself: with the node's current credential, or a token created for that node
 * — and only then may its address or pinned certificate change (audited).
 */
export async function joinNode({
  input,
  db,
  network,
  agentCallPublicKey,
}: {
  input: JoinNodeInput;
  db: DbClient;
  /** Where agents may be, and where this join came from: checked before the token is used. */
  network: AgentNetwork;
  /** THAW_AGENT_CALL_PUBLIC_KEY: the agent verifies the scheduler's calls with it. */
  agentCallPublicKey: string;
}) {
  const invalid = () =>
    new AppError(
      "UNAUTHENTICATED",
      "joinToken is invalid, expired or already used: create a new one in the dashboard (Fleet → Add node).",
      { field: "joinToken" },
    );
  // An agent of another protocol version would misread this control plane's answers and
  // calls: refused before the token is spent, so the same token works after an upgrade.
  const versionProblem = agentProtocolVersionProblem(input.protocolVersion);
  if (versionProblem)
    throw new AppError("UNPROCESSABLE", `protocolVersion: ${versionProblem}.`, {
      field: "protocolVersion",
    });
  if (!parsePrefixedSecret(JOIN_TOKEN_KIND, input.joinToken)) throw invalid();
  const addressProblem = input.agentUrl ? agentUrlProblem(input.agentUrl, network) : null;
  if (addressProblem)
    throw new AppError("BAD_REQUEST", `agentUrl: ${addressProblem}.`, { field: "agentUrl" });
  // Scheduler → agent calls go over TLS to the certificate pinned here, never in the clear.
  if (input.agentUrl && !input.agentUrl.startsWith("https://"))
    throw new AppError(
      "BAD_REQUEST",
      "agentUrl: must be https:// (the agent serves TLS with the certificate it pins at join).",
      { field: "agentUrl" },
    );
  if (input.agentUrl && !input.agentCertSha256)
    throw new AppError(
      "BAD_REQUEST",
      "agentCertSha256: required with agentUrl (the SHA-256 of the agent's TLS certificate).",
      { field: "agentCertSha256" },
    );
  const tokenHash = sha256Hex(input.joinToken);

  const token = await db.joinToken.findUnique({ where: { tokenHash } });
  if (!token) throw invalid();
  const claimed = await db.joinToken.updateMany({
    where: { id: token.id, usedAt: null, expiresAt: { gt: new Date() } },
    data: { usedAt: new Date() },
  });
  if (claimed.count !== 1) throw invalid();

  return db.$transaction(async (tx) => {
    const { figures } = input;
    const fields = {
      name: input.name,
      runtime: input.runtime,
      zone: input.zone ?? null,
      instanceType: figures.instanceType,
      gpuModel: figures.gpuModel,
      gpuCount: figures.gpuCount,
      gpuMemoryGiB: figures.gpuMemoryGiB,
      vcpus: figures.vcpus,
      memoryBytes: memoryBytesOf(figures),
      restoreStreams: figures.restoreStreams ?? null,
      gpuMemoryService: figures.gpuMemoryService ?? false,
      rdmaGbps: figures.rdmaGbps ?? 0,
      peerTransfer: figures.peerTransfer ?? false,
      networkGbps: figures.networkGbps,
      diskReadMiBps: figures.diskReadMiBps,
      diskWriteMiBps: figures.diskWriteMiBps,
      ...measuredDiskColumns(figures),
      pcieGBps: figures.pcieGBps,
      registryRttMs: figures.registryRttMs,
      driverVersion: figures.driverVersion ?? null,
      cudaVersion: figures.cudaVersion ?? null,
      agentVersion: input.agentVersion,
      agentUrl: input.agentUrl ?? null,
      agentCertSha256: input.agentCertSha256 ?? null,
      state: "booting" as const,
      stateReason: null,
    };
    // A host the fleet worker launched joins as the node row made for it (its token names
    // it). An instance that joined before (its credential was lost or rotated) joins again as
    // the same node: its replicas and history stay attached to it.
    const provisioned = token.nodeId
      ? await tx.node.findUnique({
          where: { id: token.nodeId },
          select: { id: true, orgId: true, state: true, instanceId: true, agentCertSha256: true },
        })
      : null;
    if (provisioned?.state === "terminated")
      throw new AppError(
        "CONFLICT",
        "this host's node was terminated (it took too long to join, or it was retired): shut the instance down.",
        { field: "joinToken" },
      );
    const existing =
      provisioned ??
      (input.instanceId
        ? await tx.node.findUnique({
            where: {
              provider_instanceId: { provider: input.provider, instanceId: input.instanceId },
            },
            select: {
              id: true,
              orgId: true,
              instanceId: true,
              agentCertSha256: true,
              credentialHash: true,
              pendingCredentialHash: true,
              credentialRevokedAt: true,
            },
          })
        : null);
    // Joining as an existing instance with a plain token would hand its id and live
    // credential to whoever knows the instance id (it is the node's name in the dashboard).
    // Another org's instance gets the very same answer: no telling which ids exist where.
    if (
      existing &&
      (existing.orgId !== token.orgId ||
        (!provisioned && "credentialHash" in existing && !provesNode(existing, input)))
    )
      throw new AppError(
        "CONFLICT",
        `instanceId ${input.instanceId} already joined as a node: join again with that node's credential, or with a join token created for that node.`,
        { field: "instanceId" },
      );
    const node = existing
      ? await tx.node.update({
          where: { id: existing.id },
          // The host may join before its launch recorded the instance id.
          data:
            provisioned && !provisioned.instanceId && input.instanceId
              ? { ...fields, instanceId: input.instanceId }
              : fields,
        })
      : await tx.node.create({
          data: {
            ...fields,
            orgId: token.orgId,
            provider: input.provider,
            instanceId: input.instanceId ?? null,
          },
        });
    // A new random credential at every join: whatever was issued before stops working.
    const { secret: credential, hash } = issuePrefixedSecret(NODE_CREDENTIAL_KIND);
    await tx.node.update({
      where: { id: node.id },
      data: {
        credentialHash: hash,
        pendingCredentialHash: null,
        credentialRotationRequestedAt: null,
        credentialRevokedAt: null,
      },
    });
    await tx.joinToken.update({ where: { id: token.id }, data: { nodeId: node.id } });
    const previousPin = existing?.agentCertSha256 ?? null;
    await tx.auditLog.create({
      data: {
        orgId: token.orgId,
        actorType: "node",
        actorId: node.id,
        action: existing && !provisioned ? "node.rejoined" : "node.joined",
        targetType: "node",
        targetId: node.id,
        // Where the scheduler will call it, and the certificate it will accept there: a
        // changed address or certificate is in the audit trail.
        metadata: {
          name: node.name,
          instanceType: node.instanceType,
          agentUrl: node.agentUrl,
          agentCertSha256: node.agentCertSha256,
          provedBy: provisioned ? "join_token_for_node" : existing ? "node_credential" : "new_node",
          ...(previousPin !== null && previousPin !== node.agentCertSha256
            ? { previousAgentCertSha256: previousPin, certificateChanged: true }
            : {}),
        },
      },
    });
    return {
      nodeId: node.id,
      credential,
      heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS,
      agentCallPublicKey,
    };
  });
}

/** The join presents the node's own credential (current, or issued by a rotation), not revoked. */
function provesNode(
  node: {
    credentialHash: string | null;
    pendingCredentialHash: string | null;
    credentialRevokedAt: Date | null;
  },
  input: JoinNodeInput,
): boolean {
  if (!input.nodeCredential || node.credentialRevokedAt) return false;
  if (!parsePrefixedSecret(NODE_CREDENTIAL_KIND, input.nodeCredential)) return false;
  const presented = sha256Hex(input.nodeCredential);
  return [node.credentialHash, node.pendingCredentialHash].some(
    (hash) => hash !== null && hashesEqual(hash, presented),
  );
}
