import {
  ControlPlaneError,
  type ControlPlaneClient,
  type HostFigures,
} from "@thaw/node-agent-client";
import type { CredentialStore } from "../credential-store.ts";
import type { JoinTokenPool } from "../join-tokens.ts";

export const AGENT_VERSION = "0.1.0";

export type SimHostStatus = "unjoined" | "joined" | "waiting-for-token" | "rejected";

/**
 * One simulated GPU host: it joins the control plane like a real one, then heartbeats with
 * its figures and (empty, for now) inventory. Several run in one agent process.
 */
export class SimHost {
  status: SimHostStatus = "unjoined";
  nodeId: string | undefined;
  private credential: string | undefined;
  lastError: string | undefined;

  constructor(
    readonly name: string,
    readonly figures: HostFigures,
    private readonly deps: {
      client: ControlPlaneClient;
      credentials: CredentialStore;
      tokens: JoinTokenPool;
    },
  ) {
    const stored = deps.credentials.get(name);
    if (stored) {
      this.nodeId = stored.nodeId;
      this.credential = stored.credential;
      this.status = "joined";
    }
  }

  /** Joins if needed, then heartbeats. Never throws: the outcome is in `status`/`lastError`. */
  async tick(): Promise<void> {
    try {
      if (!this.credential) await this.join();
      if (this.credential) await this.heartbeat(this.credential);
      this.lastError = undefined;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      if (error instanceof ControlPlaneError && error.status === 401 && this.status === "joined") {
        // The control plane no longer knows this credential (node deleted or terminated):
        // forget it and join again with a fresh token when one is available.
        this.deps.credentials.delete(this.name);
        this.credential = undefined;
        this.status = "unjoined";
      }
    }
  }

  private async join(): Promise<void> {
    const token = this.deps.tokens.take();
    if (!token) {
      this.status = "waiting-for-token";
      return;
    }
    try {
      const joined = await this.deps.client.join({
        joinToken: token,
        name: this.name,
        provider: "sim",
        runtime: "sim",
        instanceId: `sim-${this.name}`,
        zone: "sim-a",
        agentVersion: AGENT_VERSION,
        figures: this.figures,
      });
      this.nodeId = joined.nodeId;
      this.credential = joined.credential;
      this.status = "joined";
      this.deps.credentials.set(this.name, {
        nodeId: joined.nodeId,
        credential: joined.credential,
      });
    } catch (error) {
      if (error instanceof ControlPlaneError && !error.retryable) this.status = "rejected";
      throw error;
    }
  }

  private async heartbeat(credential: string): Promise<void> {
    await this.deps.client.heartbeat(credential, {
      agentVersion: AGENT_VERSION,
      gpusFree: this.figures.gpuCount,
      gpusUsed: 0,
      figures: this.figures,
      inventory: { images: [], snapshotIds: [], warmReplicaIds: [] },
    });
  }
}
