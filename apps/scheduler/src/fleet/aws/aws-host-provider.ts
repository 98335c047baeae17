import {
  EC2Client,
  type EC2ClientConfig,
  type Filter,
  type Instance,
  paginateDescribeInstances,
  RunInstancesCommand,
  type ServiceInputTypes,
  type ServiceOutputTypes,
  TerminateInstancesCommand,
} from "@aws-sdk/client-ec2";
import type { FinalizeRequestMiddleware } from "@smithy/types";
import type { Offering } from "@thaw/core";
import {
  type HostLaunchRequest,
  type HostLaunchResult,
  type HostProvider,
  NoCapacityError,
  type ProviderInstance,
  type ProviderInstanceState,
} from "../host-provider.ts";
import type { AwsFleetConfig } from "./aws-fleet-config.ts";
import { dataVolumeFor, runInstancesInput, TAG_CLUSTER, TAG_NODE } from "./run-instances-input.ts";

/**
 * Errors after which another offering may succeed: this type × zone has no capacity now, does
 * not exist there, or the account's quota for it is spent. Everything else (bad AMI, missing
 * permission) fails the launch with the SDK's message, since another zone would fail the same.
 */
const OFFERING_UNAVAILABLE: Record<string, string> = {
  InsufficientInstanceCapacity: "EC2 has no capacity for this type in this zone",
  InsufficientHostCapacity: "EC2 has no host capacity in this zone",
  Unsupported: "this instance type is not offered in this zone",
  VcpuLimitExceeded: "the account's vCPU quota for this instance family is spent",
  InstanceLimitExceeded: "the account's instance quota for this type is spent",
};

const LIVE_STATES = ["pending", "running", "stopping", "stopped"];

function stateOf(instance: Instance): ProviderInstanceState {
  const name = instance.State?.Name;
  return name === "pending" || name === "running" || name === "stopping" || name === "stopped"
    ? name
    : "gone";
}

function toProviderInstance(instance: Instance): ProviderInstance {
  return {
    instanceId: instance.InstanceId!,
    nodeId: instance.Tags?.find((t) => t.Key === TAG_NODE)?.Value ?? null,
    instanceType: instance.InstanceType ?? "unknown",
    zone: instance.Placement?.AvailabilityZone ?? null,
    state: stateOf(instance),
  };
}

/**
 * An offering refused for capacity or quota. EC2 answers InsufficientInstanceCapacity with a
 * 500, which the SDK would retry up to maxAttempts with backoff before we could try the next
 * offering; this error replaces it inside the retry loop (and carries no `cause`, which the
 * SDK's classifier would follow back to the 500) so the fallback happens at once.
 */
export class OfferingUnavailableError extends Error {
  override readonly name = "OfferingUnavailableError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function errorCode(error: unknown): string | undefined {
  if (error instanceof OfferingUnavailableError) return error.code;
  return error instanceof Error ? ((error as { Code?: string }).Code ?? error.name) : undefined;
}

export interface AwsHostProviderOptions {
  config: AwsFleetConfig;
  /** Renders the host's cloud-init user-data for a node and its join token. */
  userData: (o: { nodeId: string; joinToken: string; offering: Offering }) => string;
  /** Overrides for tests (a request handler that injects throttling, credentials for moto). */
  clientConfig?: Partial<EC2ClientConfig>;
}

/**
 * GPU hosts on EC2. Throttling (RequestLimitExceeded) is the SDK's adaptive retry mode:
 * exponential backoff with jitter plus a client-side token bucket that lowers the request
 * rate while EC2 throttles — a maintained implementation rather than one of ours.
 */
export class AwsHostProvider implements HostProvider {
  readonly kind = "aws" as const;
  readonly ec2: EC2Client;

  constructor(private readonly options: AwsHostProviderOptions) {
    const { config } = options;
    this.ec2 = new EC2Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      retryMode: "adaptive",
      maxAttempts: config.maxAttempts,
      ...options.clientConfig,
    });
    const surfaceRefusals: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> =
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          const code = errorCode(error);
          if (code && code in OFFERING_UNAVAILABLE) {
            throw new OfferingUnavailableError(code, (error as Error).message);
          }
          throw error;
        }
      };
    this.ec2.middlewareStack.addRelativeTo(surfaceRefusals, {
      name: "thawOfferingUnavailable",
      relation: "after",
      toMiddleware: "retryMiddleware",
    });
  }

  async launch(request: HostLaunchRequest): Promise<HostLaunchResult> {
    // A launch retried after a crash or a lost answer adopts the instance already tagged
    // with this node (the ClientToken covers the same within one offering; this covers a
    // retry that reached a later offering, and emulators that ignore ClientToken).
    const existing = await this.describe([
      { Name: `tag:${TAG_NODE}`, Values: [request.nodeId] },
      { Name: "instance-state-name", Values: LIVE_STATES },
    ]);
    const adopted = existing[0];
    if (adopted) {
      const offering = request.offerings.find(
        (o) => o.instanceType === adopted.instanceType && o.zone === adopted.zone,
      );
      if (offering) {
        return {
          instanceId: adopted.instanceId,
          offering,
          adopted: true,
          unavailable: [],
          ...this.volumeOf(offering),
        };
      }
    }

    const unavailable: HostLaunchResult["unavailable"] = [];
    for (const offering of request.offerings) {
      try {
        const answer = await this.ec2.send(
          new RunInstancesCommand(
            runInstancesInput({
              config: this.options.config,
              offering,
              nodeId: request.nodeId,
              orgId: request.orgId,
              userData: this.options.userData({
                nodeId: request.nodeId,
                joinToken: request.joinToken,
                offering,
              }),
            }),
          ),
        );
        const instanceId = answer.Instances?.[0]?.InstanceId;
        if (!instanceId) throw new Error("RunInstances answered without an instance id");
        return { instanceId, offering, adopted: false, unavailable, ...this.volumeOf(offering) };
      } catch (error) {
        const code = errorCode(error);
        const reason = code ? OFFERING_UNAVAILABLE[code] : undefined;
        if (!reason) throw error;
        unavailable.push({ offering, reason: `${code}: ${reason}` });
      }
    }
    throw new NoCapacityError(unavailable);
  }

  /** What RunInstances attached (runInstancesInput decides): recorded on the node. */
  private volumeOf(offering: Offering): Pick<HostLaunchResult, "volume"> {
    const volume = dataVolumeFor(this.options.config, offering);
    return volume ? { volume } : {};
  }

  async terminate(instanceIds: readonly string[]): Promise<void> {
    for (let i = 0; i < instanceIds.length; i += 500) {
      let batch = instanceIds.slice(i, i + 500);
      while (batch.length > 0) {
        try {
          await this.ec2.send(new TerminateInstancesCommand({ InstanceIds: batch }));
          break;
        } catch (error) {
          // One id already gone fails the whole call: drop the ones EC2 names and go on.
          if (errorCode(error) !== "InvalidInstanceID.NotFound") throw error;
          const gone = new Set((error as Error).message.match(/i-[0-9a-f]+/g) ?? []);
          const rest = batch.filter((id) => !gone.has(id));
          if (rest.length === batch.length) break;
          batch = rest;
        }
      }
    }
  }

  listInstances(): Promise<ProviderInstance[]> {
    return this.describe([{ Name: "instance-state-name", Values: LIVE_STATES }]);
  }

  private async describe(filters: Filter[]): Promise<ProviderInstance[]> {
    const found: ProviderInstance[] = [];
    const pages = paginateDescribeInstances(
      { client: this.ec2, pageSize: 500 },
      {
        Filters: [
          { Name: `tag:${TAG_CLUSTER}`, Values: [this.options.config.clusterName] },
          ...filters,
        ],
      },
    );
    for await (const page of pages) {
      for (const reservation of page.Reservations ?? []) {
        for (const instance of reservation.Instances ?? []) {
          if (instance.InstanceId) found.push(toProviderInstance(instance));
        }
      }
    }
    return found;
  }
}
