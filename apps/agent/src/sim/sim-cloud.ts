import { createHash, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { AgentError } from "../agent-error.ts";

// The sim cloud: what EC2 is to the `aws` fleet provider, this is to the `sim` one. The
// scheduler's fleet worker launches a simulated GPU host here; after its boot delay (scaled
// by the time factor, like every simulated duration) the host joins the control plane with
// the one-time token it was launched with — as cloud-init's agent would — and heartbeats
// until it is terminated. Launch and terminate are idempotent on the instance id.

export const SimCloudLaunchRequest = z
  .object({
    instanceId: z.string().regex(/^sim-[a-z0-9-]{1,64}$/, "expected 'sim-<id>'"),
    instanceType: z.string().regex(/^[a-z0-9.]+$/, "an instance type, e.g. 'g6e.xlarge'"),
    zone: z.string().min(1).max(64),
    joinToken: z.string().min(1).max(512),
    /** Simulated seconds from launch to the agent's first join (EC2 GPU AMIs: ~1–2 min). */
    bootSeconds: z.number().min(0).max(3_600),
    /**
     * The data volume the fleet provider provisioned (gp3 throughput, as on EC2); absent: the
     * instance type's default disk.
     */
    dataVolume: z
      .object({
        throughputMiBps: z.number().int().min(125).max(2_000),
        iops: z.number().int().min(3_000).max(80_000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type SimCloudLaunchRequest = z.infer<typeof SimCloudLaunchRequest>;

export interface SimCloudInstance {
  instanceId: string;
  instanceType: string;
  zone: string;
  /** The host's name (its agentUrl is /hosts/{name}). */
  name: string;
  state: "pending" | "running";
  launchedAt: string;
}

export interface SimCloudDeps {
  token: string;
  timeFactor: number;
  /** Creates the host and starts its heartbeats; throws for an unknown instance type. */
  addHost(o: SimCloudLaunchRequest & { name: string }): void;
  /** Stops the host: no more heartbeats, starts aborted. */
  removeHost(name: string): Promise<void>;
  /** Validates an instance type before anything is stored (throws with the known ones). */
  checkInstanceType(instanceType: string): void;
}

export class SimCloud {
  private readonly instances = new Map<
    string,
    SimCloudInstance & { timer?: NodeJS.Timeout; request: SimCloudLaunchRequest }
  >();
  private readonly tokenDigest: Buffer;

  constructor(private readonly deps: SimCloudDeps) {
    this.tokenDigest = createHash("sha256").update(deps.token).digest();
  }

  authenticate(authorization: string | undefined): void {
    const presented = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
    const digest = createHash("sha256")
      .update(presented ?? "")
      .digest();
    if (!presented || !timingSafeEqual(digest, this.tokenDigest)) {
      throw new AgentError("unauthenticated", "the sim cloud needs its bearer token");
    }
  }

  launch(request: SimCloudLaunchRequest): SimCloudInstance {
    const existing = this.instances.get(request.instanceId);
    if (existing) return this.view(existing);
    try {
      this.deps.checkInstanceType(request.instanceType);
    } catch (error) {
      throw new AgentError(
        "invalid_request",
        `instanceType: ${error instanceof Error ? error.message : String(error)}`,
        "instanceType",
      );
    }
    const name = `cloud-${request.instanceId.replace(/^sim-/, "").slice(0, 40)}`;
    const instance: SimCloudInstance & { timer?: NodeJS.Timeout; request: SimCloudLaunchRequest } =
      {
        instanceId: request.instanceId,
        instanceType: request.instanceType,
        zone: request.zone,
        name,
        state: "pending",
        launchedAt: new Date().toISOString(),
        request,
      };
    instance.timer = setTimeout(
      () => {
        instance.timer = undefined;
        instance.state = "running";
        this.deps.addHost({ ...request, name });
      },
      (request.bootSeconds * 1000) / this.deps.timeFactor,
    );
    this.instances.set(request.instanceId, instance);
    return this.view(instance);
  }

  async terminate(instanceId: string): Promise<{ found: boolean }> {
    const instance = this.instances.get(instanceId);
    if (!instance) return { found: false };
    this.instances.delete(instanceId);
    if (instance.timer) clearTimeout(instance.timer);
    else await this.deps.removeHost(instance.name);
    return { found: true };
  }

  list(): SimCloudInstance[] {
    return [...this.instances.values()].map((i) => this.view(i));
  }

  close(): void {
    for (const instance of this.instances.values()) clearTimeout(instance.timer);
  }

  private view(i: SimCloudInstance): SimCloudInstance {
    return {
      instanceId: i.instanceId,
      instanceType: i.instanceType,
      zone: i.zone,
      name: i.name,
      state: i.state,
      launchedAt: i.launchedAt,
    };
  }
}
