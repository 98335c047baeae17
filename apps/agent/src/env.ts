import { readFileSync } from "node:fs";
import { DEFAULT_LOG_LEVEL, LogLevel, presentEnv } from "@thaw/core/env";
import { AgentCallPublicKeyText } from "@thaw/node-agent-client";
import { NodeProvider } from "@thaw/protocol";
import { z } from "zod";

// The agent's configuration, validated once at start. Every setting has an environment
// variable and a place in an optional JSON file (THAW_AGENT_CONFIG); the variable wins when
// both are set, so a unit's EnvironmentFile can override a shared file. A bad value names
// the variable or the file's field it came from.

const boolFromEnv = z.union([
  z.boolean(),
  z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1"),
]);
const numberFromEnv = (schema: z.ZodNumber) =>
  z.union([schema, z.string().trim().min(1).pipe(z.coerce.number()).pipe(schema)]);
const probability = numberFromEnv(z.number().min(0).max(1));

/** host:port (IPv4 or a name), or [v6]:port. Port 0 asks the OS for a free one. */
const ListenAddress = z
  .string()
  .regex(
    /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/,
    "expected '<host>:<port>', e.g. '127.0.0.1:7070' or '0.0.0.0:7070'",
  )
  .refine((v) => Number(v.slice(v.lastIndexOf(":") + 1)) <= 65_535, "port above 65535");

interface Field {
  /** Where it sits in the config file. */
  path: string;
  env: string;
  schema: z.ZodType;
  default?: unknown;
}

const FIELDS = [
  {
    path: "controlPlaneUrl",
    env: "THAW_CONTROL_PLANE_URL",
    schema: z.url(),
    default: "http://localhost:3000",
  },
  {
    path: "runtime",
    env: "THAW_AGENT_RUNTIME",
    schema: z.enum(["sim", "containerd"], {
      message: "expected 'sim' (a simulated fleet) or 'containerd' (this GPU host)",
    }),
    default: "sim",
  },
  // A containerd host is one node: its name, and the instance type whose published figures
  // it reports (network, disk, PCIe) — the scheduler's prior runs on them.
  {
    path: "host.name",
    env: "THAW_AGENT_HOST_NAME",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9.-]*$/, "letters, digits, '.' and '-' only")
      .max(63),
  },
  {
    path: "host.instanceType",
    env: "THAW_AGENT_INSTANCE_TYPE",
    schema: z.string().regex(/^[a-z0-9.]+$/, "an instance type, e.g. 'g5.xlarge'"),
    default: "g5.xlarge",
  },
  {
    path: "host.provider",
    env: "THAW_AGENT_PROVIDER",
    schema: NodeProvider,
    default: "aws",
  },
  { path: "host.zone", env: "THAW_AGENT_ZONE", schema: z.string().min(1).max(64) },
  // The provider's id of this host (cloud-init reads it from IMDSv2): a host that rejoins
  // after losing its credential is the same node, and the fleet worker finds its instance.
  {
    path: "host.instanceId",
    env: "THAW_AGENT_INSTANCE_ID",
    schema: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "an instance id, e.g. 'i-0abc…'"),
  },
  {
    path: "containerd.address",
    env: "THAW_CONTAINERD_ADDRESS",
    schema: z.string().min(1),
    default: "/run/containerd/containerd.sock",
  },
  {
    path: "containerd.namespace",
    env: "THAW_CONTAINERD_NAMESPACE",
    schema: z.string().regex(/^[A-Za-z0-9._-]+$/, "letters, digits, '.', '_' and '-' only"),
    default: "thaw",
  },
  {
    path: "containerd.logDir",
    env: "THAW_CONTAINERD_LOG_DIR",
    schema: z.string().min(1),
    default: "/var/log/thaw",
  },
  {
    path: "containerd.plainHttpRegistries",
    env: "THAW_CONTAINERD_PLAIN_HTTP_REGISTRIES",
    schema: z
      .string()
      .regex(/^([A-Za-z0-9.-]+(:\d+)?)(,[A-Za-z0-9.-]+(:\d+)?)*$/, "expected 'host[:port][,…]'"),
  },
  {
    path: "containerd.stargzSnapshotter",
    env: "THAW_STARGZ_SNAPSHOTTER",
    schema: z.string().min(1),
    default: "stargz",
  },
  {
    path: "containerd.criuConfigPath",
    env: "THAW_CRIU_CONFIG",
    schema: z.string().min(1),
    default: "/etc/thaw/criu/runc.conf",
  },
  // What the installed CRIU does, reported to the scheduler as a host figure: Thaw does not
  // change CRIU. 1 = stock CRIU (one preadv loop); a build with parallel memfd restore and
  // native AIO (NVIDIA Dynamo Snapshot's patches) restores pages with several workers.
  // The operator's ModelExpress server (NVIDIA's weight-transfer service): set, this host's
  // engines load through it (publishing themselves as sources) and it can take the peer path;
  // unset, it cannot. host:port of its gRPC service, as ModelExpress's MX_SERVER_ADDRESS.
  {
    path: "containerd.modelExpressServer",
    env: "THAW_MODELEXPRESS_SERVER",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, "expected host:port of the ModelExpress gRPC server"),
  },
  // The host's EFA fabric per GPU in Gbps (0: none; p5.48xlarge: 400), reported to the
  // scheduler: a peer copy between two hosts with one goes GPU to GPU over it.
  {
    path: "containerd.rdmaGbps",
    env: "THAW_RDMA_GBPS",
    schema: numberFromEnv(z.number().min(0).max(10_000)),
    default: 0,
  },
  {
    path: "containerd.criuRestoreStreams",
    env: "THAW_CRIU_RESTORE_STREAMS",
    schema: numberFromEnv(z.number().int().min(1).max(256)),
    default: 1,
  },
  // The containerd host's disk probe (host/disk-probe.ts): sequential direct-I/O write and
  // read at first boot, cached in the state directory, reported at join. In the directory
  // given (the data volume containerd writes to: cloud-init sets /var/lib/containerd), else
  // the state directory. A sim host reports its simulated disk and never probes.
  {
    path: "diskProbe.mode",
    env: "THAW_AGENT_DISK_PROBE",
    schema: z.enum(["on", "off"], { message: "expected 'on' or 'off'" }),
    default: "on",
  },
  { path: "diskProbe.dir", env: "THAW_AGENT_DISK_PROBE_DIR", schema: z.string().min(1) },
  {
    path: "diskProbe.mib",
    env: "THAW_AGENT_DISK_PROBE_MIB",
    schema: numberFromEnv(z.number().int().min(16).max(4_096)),
    default: 256,
  },
  {
    path: "stateDir",
    env: "THAW_AGENT_STATE_DIR",
    schema: z.string().min(1),
    default: ".data/agent",
  },
  { path: "joinTokensFile", env: "THAW_JOIN_TOKENS_FILE", schema: z.string().min(1) },
  { path: "listen", env: "THAW_AGENT_LISTEN", schema: ListenAddress, default: "127.0.0.1:7070" },
  /** What the control plane should call when the listen address is not reachable as such (NAT, 0.0.0.0). */
  {
    path: "advertiseUrl",
    env: "THAW_AGENT_ADVERTISE_URL",
    schema: z.url({
      protocol: /^https$/,
      message: "expected an https:// URL (the agent serves TLS)",
    }),
  },
  // GET /metrics answers only with this bearer token (Prometheus's `authorization`); unset:
  // /metrics is off.
  {
    path: "metricsToken",
    env: "THAW_AGENT_METRICS_TOKEN",
    schema: z.string().min(16, "at least 16 characters (a shared secret)").max(256),
  },
  // The scheduler's public key, pinned by the operator (cloud-init): calls are verified with
  // it, whatever key a join answer names. Unset: the key the control plane answers at join.
  {
    path: "agentCallPublicKey",
    env: "THAW_AGENT_CALL_PUBLIC_KEY",
    schema: AgentCallPublicKeyText,
  },
  {
    path: "logLevel",
    env: "LOG_LEVEL",
    schema: LogLevel,
    default: DEFAULT_LOG_LEVEL,
  },
  {
    path: "shutdownGraceSeconds",
    env: "THAW_AGENT_SHUTDOWN_GRACE_SECONDS",
    schema: numberFromEnv(z.number().min(0).max(3_600)),
    default: 20,
  },
  {
    path: "sim.hosts",
    env: "THAW_SIM_HOSTS",
    schema: z
      .string()
      .regex(
        /^$|^[a-z0-9.]+:\d+(:\d+)?(,[a-z0-9.]+:\d+(:\d+)?)*$/,
        "expected '<instance-type>:<count>[:<data volume MiB/s>][,…]', e.g. 'g5.xlarge:2:1000,g6e.xlarge:1', or empty",
      ),
    default: "g5.xlarge:2,g6e.xlarge:2",
  },
  // The sim cloud: the scheduler's `sim` fleet provider launches and terminates simulated
  // hosts here, authenticated with this shared secret (unset: no sim cloud).
  {
    path: "sim.cloudToken",
    env: "THAW_SIM_CLOUD_TOKEN",
    schema: z.string().min(16, "at least 16 characters (a shared secret)").max(256),
  },
  {
    path: "sim.hostPrefix",
    env: "THAW_SIM_HOST_PREFIX",
    schema: z
      .string()
      .regex(/^[a-z0-9-]+$/, "lower-case letters, digits and '-' only")
      .max(40),
    default: "sim",
  },
  {
    path: "sim.timeFactor",
    env: "THAW_SIM_TIME_FACTOR",
    schema: numberFromEnv(z.number().min(1).max(1_000_000)),
    default: 1,
  },
  { path: "sim.seed", env: "THAW_SIM_SEED", schema: numberFromEnv(z.number().int()), default: 1 },
  {
    path: "sim.restoreFailureProbability",
    env: "THAW_SIM_RESTORE_FAILURE_PROBABILITY",
    schema: probability,
    default: 0,
  },
  {
    path: "sim.pullStallProbability",
    env: "THAW_SIM_PULL_STALL_PROBABILITY",
    schema: probability,
    default: 0,
  },
  { path: "sim.estargz", env: "THAW_SIM_ESTARGZ", schema: boolFromEnv, default: true },
  { path: "sim.restore", env: "THAW_SIM_RESTORE", schema: boolFromEnv, default: true },
  // The CRIU sim hosts model: 1 = stock; more = parallel page restore (a host figure they report).
  {
    path: "sim.restoreStreams",
    env: "THAW_SIM_RESTORE_STREAMS",
    schema: numberFromEnv(z.number().int().min(1).max(256)),
    default: 1,
  },
  // Sim hosts whose engines keep their weights in a GPU Memory Service (a host figure they
  // report): a restore's staged weights go straight to device memory while CRIU works.
  {
    path: "sim.gpuMemoryService",
    env: "THAW_SIM_GPU_MEMORY_SERVICE",
    schema: boolFromEnv,
    default: false,
  },
  {
    path: "telemetry.flushIntervalMs",
    env: "THAW_TELEMETRY_FLUSH_MS",
    schema: numberFromEnv(z.number().int().min(10).max(60_000)),
    default: 250,
  },
  {
    path: "telemetry.retryBaseMs",
    env: "THAW_TELEMETRY_RETRY_BASE_MS",
    schema: numberFromEnv(z.number().int().min(1).max(60_000)),
    default: 500,
  },
  {
    path: "telemetry.retryMaxMs",
    env: "THAW_TELEMETRY_RETRY_MAX_MS",
    schema: numberFromEnv(z.number().int().min(1).max(3_600_000)),
    default: 30_000,
  },
] as const satisfies readonly Field[];

export interface AgentConfig {
  controlPlaneUrl: string;
  runtime: "sim" | "containerd";
  stateDir: string;
  joinTokensFile: string | undefined;
  listen: string;
  /** Explicitly configured (or from the file); false when the default applies. */
  listenConfigured: boolean;
  advertiseUrl: string | undefined;
  metricsToken: string | undefined;
  agentCallPublicKey: string | undefined;
  logLevel: string;
  shutdownGraceSeconds: number;
  configFile: string | undefined;
  sim: {
    hosts: string;
    hostPrefix: string;
    cloudToken?: string;
    timeFactor: number;
    seed: number;
    restoreFailureProbability: number;
    pullStallProbability: number;
    estargz: boolean;
    restore: boolean;
    restoreStreams: number;
    gpuMemoryService: boolean;
  };
  telemetry: { flushIntervalMs: number; retryBaseMs: number; retryMaxMs: number };
  /** Used when runtime = containerd. */
  diskProbe: { mode: "on" | "off"; dir?: string; mib: number };
  /** Used when runtime = containerd. */
  host: {
    name?: string;
    instanceType: string;
    provider: NodeProvider;
    zone?: string;
    instanceId?: string;
  };
  containerd: {
    address: string;
    namespace: string;
    logDir: string;
    plainHttpRegistries?: string;
    stargzSnapshotter: string;
    criuConfigPath: string;
    criuRestoreStreams: number;
    modelExpressServer?: string;
    rdmaGbps: number;
  };
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Reads the configuration from the environment and, when THAW_AGENT_CONFIG names one, a JSON
 * file ({ "listen": "…", "sim": { "timeFactor": 20 }, … }). Throws ConfigError listing every
 * bad field.
 */
export function loadEnv(
  source: NodeJS.ProcessEnv = process.env,
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): AgentConfig {
  const env = presentEnv(source);
  const configFile = env.THAW_AGENT_CONFIG;
  const file = configFile === undefined ? {} : readConfigFile(configFile, readFile);
  const problems: string[] = [];
  for (const key of unknownKeys(file, "")) {
    problems.push(`  ${key} (in ${configFile}): unknown setting`);
  }
  const out: Record<string, unknown> = {};
  for (const field of FIELDS as readonly Field[]) {
    const fromEnv = env[field.env];
    const raw = fromEnv ?? getPath(file, field.path);
    const where = fromEnv !== undefined ? field.env : `${field.path} (in ${configFile})`;
    if (raw === undefined) {
      setPath(out, field.path, field.default);
      continue;
    }
    const parsed = field.schema.safeParse(raw);
    if (parsed.success) setPath(out, field.path, parsed.data);
    else problems.push(`  ${where}: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  if (problems.length > 0) {
    throw new ConfigError(`agent: bad configuration\n${problems.join("\n")}`);
  }
  const listenConfigured =
    env.THAW_AGENT_LISTEN !== undefined || getPath(file, "listen") !== undefined;
  return {
    ...(out as Omit<AgentConfig, "listenConfigured" | "configFile">),
    listenConfigured,
    configFile,
  };
}

function readConfigFile(path: string, readFile: (path: string) => string): Record<string, unknown> {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    throw new ConfigError(
      `agent: bad configuration\n  THAW_AGENT_CONFIG: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `agent: bad configuration\n  THAW_AGENT_CONFIG: ${path} is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ConfigError(
      `agent: bad configuration\n  THAW_AGENT_CONFIG: ${path} must hold a JSON object`,
    );
  }
  return json as Record<string, unknown>;
}

const KNOWN_PATHS = new Set((FIELDS as readonly Field[]).map((f) => f.path));
const KNOWN_GROUPS = new Set(
  (FIELDS as readonly Field[])
    .filter((f) => f.path.includes("."))
    .map((f) => f.path.split(".")[0]!),
);

function unknownKeys(object: Record<string, unknown>, prefix: string): string[] {
  const keys: string[] = [];
  for (const [key, value] of Object.entries(object)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (KNOWN_PATHS.has(path)) continue;
    if (
      !prefix &&
      KNOWN_GROUPS.has(key) &&
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value)
    ) {
      keys.push(...unknownKeys(value as Record<string, unknown>, path));
    } else keys.push(path);
  }
  return keys;
}

function getPath(object: Record<string, unknown>, path: string): unknown {
  let at: unknown = object;
  for (const part of path.split(".")) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function setPath(object: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let at = object;
  for (const part of parts.slice(0, -1)) {
    at[part] ??= {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts.at(-1)!] = value;
}

/**
 * THAW_SIM_HOSTS: "<type>:<count>[:<data volume MiB/s>],…". Without a volume a host has its
 * type's default disk (gp3 at 125 MiB/s on the GPU types); with one, a gp3 data volume of that
 * throughput, as the fleet provider provisions (1,000 MiB/s).
 */
export function parseSimHosts(
  spec: string,
): { instanceType: string; count: number; volumeMiBps?: number }[] {
  if (spec === "") return [];
  return spec.split(",").map((part) => {
    const [instanceType = "", count = "0", volume] = part.split(":");
    return {
      instanceType,
      count: Number(count),
      ...(volume === undefined ? {} : { volumeMiBps: Number(volume) }),
    };
  });
}

/** "127.0.0.1:7070" → { host, port }; "[::1]:7070" → { host: "::1", port }. */
export function splitListenAddress(listen: string): { host: string; port: number } {
  const colon = listen.lastIndexOf(":");
  const host = listen.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  return { host, port: Number(listen.slice(colon + 1)) };
}
