import { ControlPlaneClient, HEARTBEAT_INTERVAL_MS } from "@thaw/node-agent-client";
import { pino } from "pino";
import { CredentialStore } from "./credential-store.ts";
import { loadEnv, parseSimHosts } from "./env.ts";
import { JoinTokenPool } from "./join-tokens.ts";
import { hostFiguresFor } from "./sim/host-figures.ts";
import { SimHost } from "./sim/sim-host.ts";

let env;
try {
  env = loadEnv();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const log = pino({
  name: "thaw-agent",
  level: env.LOG_LEVEL,
  redact: ["*.credential", "*.joinToken"],
});
const client = new ControlPlaneClient({ baseUrl: env.THAW_CONTROL_PLANE_URL });
const credentials = new CredentialStore(env.THAW_AGENT_STATE_DIR);
const tokens = new JoinTokenPool(env.THAW_JOIN_TOKENS_FILE);

const hosts: SimHost[] = [];
for (const { instanceType, count } of parseSimHosts(env.THAW_SIM_HOSTS)) {
  const figures = hostFiguresFor(instanceType);
  for (let i = 0; i < count; i++) {
    hosts.push(
      new SimHost(
        `${env.THAW_SIM_HOST_PREFIX}-${instanceType.replace(/\./g, "-")}-${i + 1}`,
        figures,
        { client, credentials, tokens },
      ),
    );
  }
}
log.info(
  { hosts: hosts.length, controlPlane: env.THAW_CONTROL_PLANE_URL, tokens: tokens.remaining },
  "sim agent starting",
);

let stopping = false;
let round: Promise<void> = Promise.resolve();
const lastReported = new Map<string, string>();
const runRound = () => {
  round = Promise.all(hosts.map((h) => h.tick())).then(() => {
    for (const h of hosts) {
      const summary = `${h.status}${h.lastError ? `: ${h.lastError}` : ""}`;
      if (lastReported.get(h.name) !== summary) {
        lastReported.set(h.name, summary);
        (h.lastError ? log.warn.bind(log) : log.info.bind(log))(
          { host: h.name, nodeId: h.nodeId, status: h.status, error: h.lastError },
          "host status",
        );
      }
    }
  });
};
runRound();
const timer = setInterval(() => {
  if (!stopping) runRound();
}, HEARTBEAT_INTERVAL_MS);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    clearInterval(timer);
    log.info({ signal }, "sim agent stopping after the current round");
    void round.finally(() => process.exit(0));
  });
}
