import { ControlPlaneError, type ControlPlaneClient } from "@thaw/node-agent-client";
import {
  AGENT_PROTOCOL_VERSION,
  type HeartbeatRequestInput,
  type HostFigures,
  type NodeProvider,
  type NodeRuntime,
} from "@thaw/protocol";
import { type Logger } from "pino";
import { type AgentCallKeys } from "../api/agent-call-auth.ts";
import { type CredentialStore } from "../credential-store.ts";
import { type JoinTokenSource } from "../join-tokens.ts";
import { type AgentMetrics } from "../metrics.ts";
import { AGENT_VERSION } from "./agent-version.ts";

export type MembershipStatus = "unjoined" | "joined" | "waiting-for-token" | "rejected";

/** Who this host says it is at join: the wiring (agent-process.ts) decides every value. */
export interface HostIdentity {
  name: string;
  runtime: NodeRuntime;
  provider: NodeProvider;
  zone?: string;
  /** The provider's id of this host (EC2 instance id): a host that rejoins is the same node. */
  instanceId: string;
  /** This host's base URL for the scheduler (joined as `agentUrl`). */
  agentUrl?: string;
  /** SHA-256 of the agent's TLS certificate, pinned at join with agentUrl. */
  certSha256?: string;
  figures: HostFigures;
}

export interface MembershipDeps {
  client: ControlPlaneClient;
  credentials: CredentialStore;
  tokens: JoinTokenSource;
  log: Logger;
  metrics?: AgentMetrics;
  /** The scheduler keys the process trusts; the join answer's key is added to them. */
  callKeys?: AgentCallKeys;
}

/** What a heartbeat reports of the host's current use, read when it is sent. */
export type HostReport = Pick<HeartbeatRequestInput, "gpusFree" | "gpusUsed" | "inventory">;

/**
 * The host's membership of the control plane: it joins with a one-time token, heartbeats
 * with its credential, renews the credential when asked, and joins again (proving it is the
 * same node) when the control plane stops taking it.
 */
export class Membership {
  status: MembershipStatus = "unjoined";
  nodeId: string | undefined;
  lastError: string | undefined;
  private credentialValue: string | undefined;
  /** The credential the control plane stopped taking: proof of identity when joining again. */
  private staleCredential: string | undefined;
  /** The scheduler's public key this host's calls must be signed with (from its join). */
  private callKey: string | undefined;
  /** A rotation was asked for and the new credential is being fetched. */
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly identity: HostIdentity,
    private readonly deps: MembershipDeps,
  ) {
    const stored = deps.credentials.get(identity.name);
    if (stored && stored.agentCallPublicKey && stored.certSha256 === identity.certSha256) {
      this.nodeId = stored.nodeId;
      this.setCredential(stored.credential);
      this.callKey = deps.callKeys?.accept(stored.agentCallPublicKey);
      this.status = "joined";
    } else if (stored) {
      // Joined by an older agent (no scheduler key) or with another certificate: the
      // scheduler could not call it, so it joins again, proving it is that node.
      this.nodeId = stored.nodeId;
      this.staleCredential = stored.credential;
    }
  }

  /** Whether a call signed with this key (its text) may act on this host. */
  trustsCallKey(key: string): boolean {
    return this.callKey !== undefined && this.callKey === key;
  }

  get credential(): string | undefined {
    return this.credentialValue;
  }

  /** Joins if needed, then heartbeats. Never throws: the outcome is in `status`/`lastError`. */
  async tick(report: () => Promise<HostReport>): Promise<void> {
    try {
      if (!this.credentialValue) await this.join();
      if (this.credentialValue) await this.heartbeat(this.credentialValue, report);
      this.lastError = undefined;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      if (error instanceof ControlPlaneError && error.status === 401 && this.status === "joined") {
        // The control plane no longer takes this credential (node deleted, terminated or
        // revoked): join again with a fresh token when one is available, presenting the old
        // credential (it proves nothing once revoked: then only a token made for this node
        // does). It stays on disk until a join replaces it, so a restart in between can still
        // present it.
        this.staleCredential = this.credentialValue;
        this.setCredential(undefined);
        this.status = "unjoined";
      }
    }
  }

  private setCredential(credential: string | undefined): void {
    this.credentialValue = credential;
  }

  private async join(): Promise<void> {
    const token = this.deps.tokens.take();
    if (!token) {
      this.status = "waiting-for-token";
      return;
    }
    const { name, agentUrl, certSha256 } = this.identity;
    try {
      const joined = await this.deps.client.join({
        joinToken: token,
        protocolVersion: AGENT_PROTOCOL_VERSION,
        name,
        provider: this.identity.provider,
        runtime: this.identity.runtime,
        instanceId: this.identity.instanceId,
        ...(this.identity.zone ? { zone: this.identity.zone } : {}),
        agentVersion: AGENT_VERSION,
        ...(agentUrl ? { agentUrl } : {}),
        ...(agentUrl && certSha256 ? { agentCertSha256: certSha256 } : {}),
        ...(this.staleCredential ? { nodeCredential: this.staleCredential } : {}),
        figures: this.identity.figures,
      });
      this.staleCredential = undefined;
      this.nodeId = joined.nodeId;
      this.setCredential(joined.credential);
      this.callKey = this.deps.callKeys?.accept(joined.agentCallPublicKey);
      this.status = "joined";
      this.deps.credentials.set(name, {
        nodeId: joined.nodeId,
        credential: joined.credential,
        agentCallPublicKey: joined.agentCallPublicKey,
        ...(certSha256 ? { certSha256 } : {}),
      });
      this.deps.metrics?.joins.inc({ result: "joined" });
    } catch (error) {
      this.deps.metrics?.joins.inc({ result: "failed" });
      if (error instanceof ControlPlaneError && !error.retryable) this.status = "rejected";
      // Unreachable or a server-side failure: the token was not spent, keep it for a retry.
      else this.deps.tokens.putBack(token);
      throw error;
    }
  }

  private async heartbeat(credential: string, report: () => Promise<HostReport>): Promise<void> {
    const current = await report();
    try {
      const answer = await this.deps.client.heartbeat(credential, {
        agentVersion: AGENT_VERSION,
        gpusFree: current.gpusFree,
        gpusUsed: current.gpusUsed,
        figures: this.identity.figures,
        inventory: current.inventory,
      });
      this.deps.metrics?.heartbeats.inc({ result: "sent" });
      if (answer.rotateCredential) this.renewing ??= this.renewCredential(credential);
    } catch (error) {
      this.deps.metrics?.heartbeats.inc({ result: "failed" });
      throw error;
    }
  }

  /**
   * An operator rotated this node's credential: fetch the new one with the current one, keep
   * it on disk first, then use it (its first use retires the old one at the control plane).
   * A failure keeps the current credential, which still works; the next heartbeat asks again.
   */
  private async renewCredential(current: string): Promise<void> {
    const { name } = this.identity;
    try {
      const renewed = await this.deps.client.renewCredential(current);
      const stored = this.deps.credentials.get(name);
      if (stored && this.credentialValue === current) {
        this.deps.credentials.set(name, { ...stored, credential: renewed.credential });
        this.setCredential(renewed.credential);
        this.deps.log.info({ host: name, nodeId: this.nodeId }, "credential rotated");
      }
    } catch (error) {
      this.deps.log.warn(
        { host: name, err: error instanceof Error ? error.message : String(error) },
        "credential rotation failed; retrying at the next heartbeat",
      );
    } finally {
      this.renewing = undefined;
    }
  }
}
