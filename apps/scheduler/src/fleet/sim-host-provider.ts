import { type PinnedFetch, keepAliveFetch } from "@thaw/node-agent-client";
import type { ProvisionedVolume } from "@thaw/core";
import { HOST_PROFILES, type HostProfile } from "@thaw/core/cold-start-model";
import { z } from "zod";
import type {
  HostLaunchRequest,
  HostLaunchResult,
  HostProvider,
  ProviderInstance,
} from "./host-provider.ts";

// The `sim` provider: simulated GPU hosts from the sim cloud of a sim agent process
// (apps/agent, THAW_SIM_CLOUD_TOKEN). Launching waits out a realistic boot delay there, then
// the host joins with its token like an EC2 host running cloud-init. Capacity is unbounded,
// so the first offering always launches.

const Instance = z.object({
  instanceId: z.string(),
  instanceType: z.string(),
  zone: z.string(),
  state: z.enum(["pending", "running"]),
});
const InstanceList = z.object({ instances: z.array(Instance) });

export interface SimHostProviderOptions {
  /** The sim agent's base URL (https). */
  cloudUrl: string;
  /** SHA-256 of the sim agent's certificate: no other answers for the sim cloud. */
  cloudCertSha256: string;
  /** The shared secret (THAW_SIM_CLOUD_TOKEN). */
  token: string;
  /** Simulated seconds from launch to join. */
  bootSeconds: number;
  /**
   * The data volume every host gets, as the aws provider's dataVolume (gp3 throughput and
   * IOPS); the sim cloud simulates its disk with it. Instance-store types get none.
   */
  dataVolume?: ProvisionedVolume;
  fetchImpl?: PinnedFetch;
}

const SIM_PREFIX = "sim-";

export class SimHostProvider implements HostProvider {
  readonly kind = "sim" as const;
  private readonly fetchImpl: PinnedFetch;

  constructor(private readonly options: SimHostProviderOptions) {
    this.fetchImpl = options.fetchImpl ?? keepAliveFetch();
  }

  async launch(request: HostLaunchRequest): Promise<HostLaunchResult> {
    const offering = request.offerings[0];
    if (!offering) throw new Error("launch: no offering to launch from");
    const instanceId = `${SIM_PREFIX}${request.nodeId}`;
    const volume = this.volumeFor(offering.instanceType);
    await this.call("POST", "", {
      instanceId,
      instanceType: offering.instanceType,
      zone: offering.zone,
      joinToken: request.joinToken,
      bootSeconds: this.options.bootSeconds,
      ...(volume ? { dataVolume: volume } : {}),
    });
    return { instanceId, offering, adopted: false, unavailable: [], ...(volume ? { volume } : {}) };
  }

  private volumeFor(instanceType: string): ProvisionedVolume | undefined {
    const profile = (HOST_PROFILES as Record<string, HostProfile | undefined>)[instanceType];
    return profile?.disk.kind === "local-nvme" ? undefined : this.options.dataVolume;
  }

  async terminate(instanceIds: readonly string[]): Promise<void> {
    for (const id of instanceIds) await this.call("DELETE", `/${encodeURIComponent(id)}`);
  }

  async listInstances(): Promise<ProviderInstance[]> {
    const { instances } = InstanceList.parse(await this.call("GET", ""));
    return instances.map((i) => ({
      instanceId: i.instanceId,
      nodeId: i.instanceId.startsWith(SIM_PREFIX) ? i.instanceId.slice(SIM_PREFIX.length) : null,
      instanceType: i.instanceType,
      zone: i.zone,
      state: i.state,
    }));
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const url = `${this.options.cloudUrl.replace(/\/+$/, "")}/sim-cloud/v1/instances${path}`;
    const response = await this.fetchImpl(url, {
      method,
      headers: {
        authorization: `Bearer ${this.options.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
      certSha256: this.options.cloudCertSha256,
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(
        `sim cloud ${method} ${path || "/"} answered ${response.status}: ${text.slice(0, 300)}`,
      );
    }
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
}
