import type { Offering, ProvisionedVolume } from "@thaw/core";

// Where GPU hosts come from (issue 6): one interface, an implementation per provider —
// `aws` launches EC2 instances, `sim` starts simulated agents after a realistic boot delay.
// The fleet worker decides what to launch or retire (planFleetChange in core); a provider
// only carries it out and reports what exists.

export interface HostLaunchRequest {
  /** The node row created for this host before launch; also its idempotency key. */
  nodeId: string;
  orgId: string;
  /** Offerings to try, in order of preference (the planner's pick first). */
  offerings: readonly Offering[];
  /** The one-time join token the host's agent presents (kept out of logs). */
  joinToken: string;
}

export interface HostLaunchResult {
  instanceId: string;
  offering: Offering;
  /** True when an instance for this node already existed (a retried launch) and was adopted. */
  adopted: boolean;
  /**
   * The data volume attached for images, snapshots and weights (gp3 throughput and IOPS), kept
   * on the node: the agent cannot see what was provisioned. Absent: none (instance store).
   */
  volume?: ProvisionedVolume;
  /** Offerings that refused for lack of capacity on the way, to be skipped for a while. */
  unavailable: { offering: Offering; reason: string }[];
}

export type ProviderInstanceState = "pending" | "running" | "stopping" | "stopped" | "gone";

export interface ProviderInstance {
  instanceId: string;
  /** From the instance's thaw:node-id tag; null for an instance Thaw did not tag. */
  nodeId: string | null;
  instanceType: string;
  zone: string | null;
  state: ProviderInstanceState;
}

export interface HostProvider {
  readonly kind: "aws" | "sim";
  launch(request: HostLaunchRequest): Promise<HostLaunchResult>;
  /** Idempotent: terminating an instance that is already gone is not an error. */
  terminate(instanceIds: readonly string[]): Promise<void>;
  /** Every live instance of this cluster (not the terminated ones). */
  listInstances(): Promise<ProviderInstance[]>;
}

/** Every offering refused for capacity: the caller marks them unavailable and tells the user. */
export class NoCapacityError extends Error {
  override readonly name = "NoCapacityError";
  constructor(readonly unavailable: { offering: Offering; reason: string }[]) {
    super(
      `no capacity in any offering: ${unavailable
        .map((u) => `${u.offering.instanceType}@${u.offering.zone} (${u.reason})`)
        .join("; ")}`,
    );
  }
}
