// Fixtures shared by the integration tests of core, web, the scheduler and e2e (never
// imported by product code): what a g5.xlarge host reports at join, an idle host's
// heartbeat, and a valid deployment body.

/** A g5.xlarge (one A10G) as its agent reports it at join. */
export const G5_XLARGE_JOIN_FIGURES = {
  instanceType: "g5.xlarge",
  gpuModel: "A10G",
  gpuCount: 1,
  gpuMemoryGiB: 24,
  vcpus: 4,
  networkGbps: 10,
  diskReadMiBps: 1000,
  diskWriteMiBps: 125,
  pcieGBps: 12,
  registryRttMs: 3,
};

/**
 * A ready simulated g5.xlarge's Node row for tests that need a host to read figures from (its
 * disk on the default gp3 125 MiB/s unless overridden): spread into `db.node.create({ data })`.
 */
export function testNodeRow(orgId: string, overrides: Record<string, unknown> & { name: string }) {
  return {
    orgId,
    provider: "sim" as const,
    runtime: "sim" as const,
    instanceType: G5_XLARGE_JOIN_FIGURES.instanceType,
    gpuModel: G5_XLARGE_JOIN_FIGURES.gpuModel,
    gpuCount: G5_XLARGE_JOIN_FIGURES.gpuCount,
    vcpus: G5_XLARGE_JOIN_FIGURES.vcpus,
    networkGbps: G5_XLARGE_JOIN_FIGURES.networkGbps,
    diskReadMiBps: 125,
    diskWriteMiBps: 125,
    pcieGBps: G5_XLARGE_JOIN_FIGURES.pcieGBps,
    state: "ready" as const,
    lastHeartbeatAt: new Date(),
    agentUrl: "http://127.0.0.1:9/agent",
    ...overrides,
  };
}

/** The heartbeat of a one-GPU host that holds nothing. */
export const IDLE_HEARTBEAT = {
  agentVersion: "test",
  gpusFree: 1,
  gpusUsed: 0,
  inventory: { images: [], snapshotIds: [], warmReplicaIds: [] },
};

/** A valid deployment body (vLLM serving Llama 3.2 3B) for tests that create endpoints. */
export const TEST_DEPLOYMENT = {
  imageRef: "registry.example.com/vllm-openai:v0.11.0",
  imageBytes: 7_700_000_000,
  modelSource: "hf://meta-llama/Llama-3.2-3B-Instruct",
  modelBytes: 6_430_000_000,
  modelFormat: "safetensors",
  engine: "vllm",
} as const;

/** Agents on this machine, joining from it: what an in-process joinNode call is given. */
export const TEST_AGENT_NETWORK = { agentCidrs: [], sourceAddress: "127.0.0.1" } as const;

/**
 * A scheduler's public key for core's joinNode calls (the agent would verify calls with it).
 * Core tests call no agent; tests that do generate a pair (generateAgentCallKeyPair).
 */
export const TEST_AGENT_CALL_PUBLIC_KEY =
  "MCowBQYDK2VwAyEAnXcAANsPB7C8cJmzrTEiFiW5aPEgySmtDHtbmwfmUfY=";

/** What a joining agent pins: a made-up certificate SHA-256 (core never dials it). */
export const TEST_AGENT_CERT_SHA256 = "a".repeat(64);

export {
  pushTinyImage,
  startTestRegistry,
  type TestRegistry,
} from "../images/testing/test-registry.ts";

export { freePort, startMotoServer, type MotoServer } from "./moto-server.ts";

export {
  parsePrometheusText,
  sumObserved,
  sumSamples,
  type PrometheusFamily,
  type PrometheusSample,
} from "./prometheus-text.ts";

export {
  startTestReceiver,
  type ReceivedWebhook,
  type TestReceiver,
} from "../webhooks/testing-receiver.ts";

export {
  hexId,
  spanAttribute,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "./otlp-receiver.ts";
export { syntheticLoadMinutes } from "./load-week.ts";

export {
  cpuBetween,
  readCpu,
  THIS_PROCESS,
  withSameLoadRate,
  type CpuReading,
  type CpuWindow,
  type ProcessGroup,
} from "./process-cpu.ts";
