import { mkdirSync } from "node:fs";
import { type Server } from "node:https";
import { type AddressInfo } from "node:net";
import { hostname, networkInterfaces, totalmem } from "node:os";
import { join } from "node:path";
import { ControlPlaneClient, keepAliveFetch } from "@thaw/node-agent-client";
import { HEARTBEAT_INTERVAL_SECONDS, type HostFigures, type MeasuredDisk } from "@thaw/protocol";
import { type Logger } from "pino";
import { AgentCallKeys, NonceCache } from "./api/agent-call-auth.ts";
import { createAgentServer } from "./api/agent-server.ts";
import { CredentialStore } from "./credential-store.ts";
import { type AgentConfig, parseSimHosts, splitListenAddress } from "./env.ts";
import { HeartbeatLoop } from "./host/heartbeat-loop.ts";
import { detectGpuDriver } from "./host/gpu-driver.ts";
import { HostAgent, type MembershipStatus } from "./host/host-agent.ts";
import { JoinTokenPool, SingleJoinToken } from "./join-tokens.ts";
import { AgentMetrics } from "./metrics.ts";
import { ContainerdRuntime } from "./runtimes/containerd/containerd-runtime.ts";
import { SimClock } from "./runtimes/sim/sim-clock.ts";
import { SimRuntime, hostSeed } from "./runtimes/sim/sim-runtime.ts";
import { measureDisk } from "./host/disk-probe.ts";
import {
  hostFiguresFor,
  hostProfileFor,
  type SimDataVolume,
  simHostFigures,
  simHostProfile,
} from "./sim/host-figures.ts";
import { SimCloud } from "./sim/sim-cloud.ts";
import { simHostIdentity } from "./sim/sim-host-identity.ts";
import { TelemetryPipeline } from "./telemetry/telemetry-pipeline.ts";
import { TelemetrySpool } from "./telemetry/spool.ts";
import { loadOrCreateAgentTls } from "./tls/agent-tls.ts";

// The agent process: one HTTPS server, one heartbeat loop, one telemetry pipeline and spool,
// and the hosts it serves (a sim fleet: many; a GPU host: one).

export interface AgentProcess {
  hosts: ReadonlyMap<string, HostAgent>;
  /** Where the API listens, e.g. https://127.0.0.1:7070. */
  listenUrl: string;
  /** SHA-256 of the agent's certificate: what its hosts pin at join (and the sim cloud's callers). */
  certSha256: string;
  /** What the hosts joined with: `${advertiseBase}/hosts/{name}`. */
  advertiseBase: string;
  metrics: AgentMetrics;
  telemetry: TelemetryPipeline;
  simCloud: SimCloud | undefined;
  /** Graceful: refuse starts, let in-flight ones finish (up to the grace), flush telemetry. */
  shutdown(reason: string): Promise<void>;
}

export interface StartAgentOptions {
  log: Logger;
  metrics?: AgentMetrics;
  client?: ControlPlaneClient;
  heartbeatIntervalMs?: number;
}

export async function startAgent(
  config: AgentConfig,
  options: StartAgentOptions,
): Promise<AgentProcess> {
  const { log } = options;
  const metrics = options.metrics ?? new AgentMetrics();
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  const client =
    options.client ??
    new ControlPlaneClient({ baseUrl: config.controlPlaneUrl, fetchImpl: keepAliveFetch() });
  const credentials = new CredentialStore(config.stateDir);
  const tls = await loadOrCreateAgentTls(config.stateDir);
  const callKeys = new AgentCallKeys(config.agentCallPublicKey);
  const tokens = new JoinTokenPool(config.joinTokensFile);
  const hosts = new Map<string, HostAgent>();
  let draining = false;

  const { spool, load } = await TelemetrySpool.open(config.stateDir);
  if (load.pending.length > 0 || load.skippedLines > 0) {
    log.info(
      { records: load.pending.length, skippedLines: load.skippedLines },
      "telemetry spool replayed",
    );
  }
  const telemetry = new TelemetryPipeline({
    spool,
    replayed: load.pending,
    transport: (credential, batch) => client.sendTelemetry(credential, batch),
    credentialFor: (host) => hosts.get(host)?.credential,
    flushIntervalMs: config.telemetry.flushIntervalMs,
    retry: { baseMs: config.telemetry.retryBaseMs, maxMs: config.telemetry.retryMaxMs },
    stateDir: config.stateDir,
    log,
    metrics,
  });

  // Hosts launched by the sim cloud after start; the heartbeat loop exists by then.
  const late: { loop?: HeartbeatLoop } = {};
  const clock = new SimClock(config.sim.timeFactor);
  const simRuntime = (name: string, figures: HostFigures, volume: SimDataVolume | undefined) =>
    new SimRuntime({
      profile: simHostProfile(figures.instanceType, volume),
      figures,
      clock,
      seed: hostSeed(config.sim.seed, name),
      failures: {
        restoreFailureProbability: config.sim.restoreFailureProbability,
        pullStallProbability: config.sim.pullStallProbability,
      },
      estargz: config.sim.estargz,
      restore: config.sim.restore,
    });
  const simCloud =
    config.runtime === "sim" && config.sim.cloudToken
      ? new SimCloud({
          token: config.sim.cloudToken,
          timeFactor: config.sim.timeFactor,
          checkInstanceType: (instanceType) => void hostProfileFor(instanceType),
          addHost: ({ name, instanceType, zone, instanceId, joinToken, dataVolume }) => {
            const figures = simHostFigures(instanceType, dataVolume, new Date(), config.sim);
            const host = new HostAgent(name, figures, simRuntime(name, figures, dataVolume), {
              ...hostDeps,
              tokens: new SingleJoinToken(joinToken),
              agentUrl: `${advertiseBase}/hosts/${encodeURIComponent(name)}`,
              ...simHostIdentity(name, { zone, instanceId }),
            });
            hosts.set(name, host);
            late.loop?.add(host);
            log.info(
              { host: name, instanceId, instanceType, zone, dataVolume },
              "sim cloud host booted",
            );
          },
          removeHost: async (name) => {
            const host = hosts.get(name);
            if (!host) return;
            host.drain();
            await Promise.allSettled(host.abortStarts("instance terminated"));
            await late.loop?.remove(host);
            hosts.delete(name);
            credentials.delete(name);
            log.info({ host: name }, "sim cloud host terminated");
          },
        })
      : undefined;

  const server = createAgentServer({
    hosts,
    log,
    metrics,
    isDraining: () => draining,
    ...(simCloud ? { simCloud } : {}),
    tls,
    callKeys,
    nonces: new NonceCache(),
    metricsToken: config.metricsToken,
  });
  const address = await listen(server, config, log);
  const listenUrl = `https://${urlHost(address.address)}:${address.port}`;
  const advertiseBase = (
    config.advertiseUrl ?? `https://${urlHost(reachableAddress(address.address))}:${address.port}`
  ).replace(/\/+$/, "");

  const hostDeps = {
    client,
    credentials,
    tokens,
    telemetry,
    log,
    metrics,
    certSha256: tls.certSha256,
    callKeys,
  };
  if (config.runtime === "containerd") {
    // One GPU host: the process serves it at its root (/v1/…), which is its agentUrl.
    const name = config.host.name ?? hostname();
    const figures = {
      ...hostFiguresFor(config.host.instanceType),
      // What this host has, not what its type is published with: sleeping engines live in it.
      memoryGiB: Math.max(1, Math.floor(totalmem() / 2 ** 30)),
      restoreStreams: config.containerd.criuRestoreStreams,
      ...(config.containerd.rdmaGbps > 0 ? { rdmaGbps: config.containerd.rdmaGbps } : {}),
      peerTransfer: config.containerd.modelExpressServer !== undefined,
      driverVersion: undefined,
      cudaVersion: undefined,
      ...(await detectGpuDriver()),
      ...(config.diskProbe.mode === "on" ? await probeDataDisk(config, log) : {}),
    };
    const runtime = new ContainerdRuntime({
      address: config.containerd.address,
      namespace: config.containerd.namespace,
      logDir: config.containerd.logDir,
      plainHttpRegistries: config.containerd.plainHttpRegistries?.split(",") ?? [],
      stargz: { snapshotter: config.containerd.stargzSnapshotter },
      criuConfigPath: config.containerd.criuConfigPath,
      // Each deployment's compiled kernels, kept across its replicas (kernel-cache.ts).
      kernelCacheDir: join(config.stateDir, "kernel-caches"),
      log: log.child({ host: name }),
      ...(config.containerd.modelExpressServer
        ? {
            modelExpress: {
              serverAddress: config.containerd.modelExpressServer,
              rdma: config.containerd.rdmaGbps > 0,
            },
          }
        : {}),
    });
    hosts.set(
      name,
      new HostAgent(name, figures, runtime, {
        ...hostDeps,
        agentUrl: advertiseBase,
        provider: config.host.provider,
        ...(config.host.zone ? { zone: config.host.zone } : {}),
        // Outside a cloud (no instance id from IMDS) the host's name is its identity.
        instanceId: config.host.instanceId ?? `${runtime.kind}-${name}`,
      }),
    );
  }

  const simHosts = config.runtime === "sim" ? parseSimHosts(config.sim.hosts) : [];
  // Hosts of a type are numbered across its groups ("g6e.xlarge:1:1000,g6e.xlarge:1": -1 and
  // -2), so a host keeps its name, and its stored credential, when a group gains a volume.
  const numbered = new Map<string, number>();
  const bootedAt = new Date();
  for (const { instanceType, count, volumeMiBps } of simHosts) {
    const volume = volumeMiBps === undefined ? undefined : { throughputMiBps: volumeMiBps };
    const figures = simHostFigures(instanceType, volume, bootedAt, config.sim);
    for (let i = 0; i < count; i++) {
      const n = (numbered.get(instanceType) ?? 0) + 1;
      numbered.set(instanceType, n);
      const name = `${config.sim.hostPrefix}-${instanceType.replace(/\./g, "-")}-${n}`;
      const runtime = simRuntime(name, figures, volume);
      hosts.set(
        name,
        new HostAgent(name, figures, runtime, {
          ...hostDeps,
          agentUrl: `${advertiseBase}/hosts/${encodeURIComponent(name)}`,
          ...simHostIdentity(name),
        }),
      );
    }
  }

  const lastReported = new Map<string, string>();
  const loop = (late.loop = new HeartbeatLoop([...hosts.values()], {
    intervalMs: options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_SECONDS * 1000,
    afterTick: (beating) => {
      const host = beating as HostAgent;
      const summary = `${host.status}${host.lastError ? `: ${host.lastError}` : ""}`;
      if (lastReported.get(host.name) === summary) return;
      lastReported.set(host.name, summary);
      const fields = {
        host: host.name,
        nodeId: host.nodeId,
        status: host.status,
        error: host.lastError,
      };
      if (host.lastError) log.warn(fields, "host status");
      else log.info(fields, "host status");
    },
  }));
  const countHosts = () => {
    const counts: Record<MembershipStatus, number> = {
      unjoined: 0,
      joined: 0,
      "waiting-for-token": 0,
      rejected: 0,
    };
    for (const host of hosts.values()) counts[host.status]++;
    for (const [status, n] of Object.entries(counts)) metrics.hosts.set({ status }, n);
  };
  const gaugeTimer = setInterval(countHosts, 5_000);
  countHosts();
  telemetry.start();
  loop.start();
  log.info(
    {
      hosts: hosts.size,
      listen: listenUrl,
      advertise: advertiseBase,
      certSha256: tls.certSha256,
      controlPlane: config.controlPlaneUrl,
      timeFactor: config.sim.timeFactor,
      joinTokens: tokens.remaining,
    },
    "agent started",
  );

  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string) =>
    (stopping ??= (async () => {
      draining = true;
      for (const host of hosts.values()) host.drain();
      const inFlight = [...hosts.values()].flatMap((host) => host.inFlight());
      log.info(
        { reason, inFlightStarts: inFlight.length, graceSeconds: config.shutdownGraceSeconds },
        "agent stopping",
      );
      if (inFlight.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled(inFlight),
          new Promise(
            (resolve) => (timer = setTimeout(resolve, config.shutdownGraceSeconds * 1000)),
          ),
        ]);
        clearTimeout(timer);
        const handedBack = [...hosts.values()].flatMap((host) =>
          host.abortStarts("agent shutting down"),
        );
        if (handedBack.length > 0)
          log.warn(
            { starts: handedBack.length },
            "handing back starts still running (reported failed) and stopping kernel-cache captures (not reported)",
          );
        await Promise.allSettled(handedBack);
      }
      clearInterval(gaugeTimer);
      simCloud?.close();
      await loop.stop();
      await telemetry.stop(5_000);
      if (telemetry.depth > 0)
        log.warn(
          { records: telemetry.depth },
          "telemetry left in the spool; it is sent after the next start",
        );
      await spool.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 1_000).unref();
      });
      log.info("agent stopped");
    })());

  return {
    hosts,
    listenUrl,
    certSha256: tls.certSha256,
    advertiseBase,
    metrics,
    telemetry,
    simCloud,
    shutdown,
  };
}

/**
 * The data disk's measured throughput as join figures (cached from an earlier boot, else a
 * probe of a few seconds). A failed probe is logged and the host joins without it: the
 * control plane then uses the provisioned volume or the instance profile.
 */
async function probeDataDisk(
  config: AgentConfig,
  log: Logger,
): Promise<{ measuredDisk?: MeasuredDisk }> {
  const dir = config.diskProbe.dir ?? config.stateDir;
  try {
    const { measured, cached } = await measureDisk({
      stateDir: config.stateDir,
      dir,
      bytes: config.diskProbe.mib * 1024 * 1024,
    });
    log.info({ dir, ...measured, cached }, "data disk measured");
    return { measuredDisk: measured };
  } catch (error) {
    log.warn(
      { dir, err: error instanceof Error ? error.message : String(error) },
      "data disk probe failed; joining with the instance profile's disk figures",
    );
    return {};
  }
}

async function listen(server: Server, config: AgentConfig, log: Logger): Promise<AddressInfo> {
  const { host, port } = splitListenAddress(config.listen);
  const attempt = (p: number) =>
    new Promise<AddressInfo>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      server.once("error", onError);
      server.listen(p, host, () => {
        server.off("error", onError);
        resolve(server.address() as AddressInfo);
      });
    });
  try {
    return await attempt(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || config.listenConfigured) {
      throw new Error(
        `THAW_AGENT_LISTEN: cannot listen on ${config.listen}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        { cause: error },
      );
    }
    // The default port is taken (another agent on this machine): any free port will do,
    // since hosts join with the URL they are actually reachable at.
    log.warn(
      { listen: config.listen },
      "default agent port in use; listening on a free port instead",
    );
    return attempt(0);
  }
}

function urlHost(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

/** A wildcard listen address is not something to call: advertise a concrete one. */
function reachableAddress(address: string): string {
  if (address !== "0.0.0.0" && address !== "::") return address;
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === "IPv4" && !entry.internal) return entry.address;
    }
  }
  return "127.0.0.1";
}
