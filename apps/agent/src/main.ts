import { startAgent } from "./agent-process.ts";
import { type AgentConfig, loadEnv } from "./env.ts";
import { createLogger } from "./logger.ts";
import { AgentMetrics } from "./metrics.ts";

// The agent daemon: `tsx src/main.ts`. Configuration from the environment and an optional
// JSON file (THAW_AGENT_CONFIG); exits 2 naming the bad field. SIGTERM/SIGINT stop it
// gracefully (see agent-process.ts); a second signal exits at once.

let config: AgentConfig;
try {
  config = loadEnv();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const log = createLogger(config.logLevel);

process.on("unhandledRejection", (reason) => {
  log.error({ err: reason }, "unhandled rejection");
});

try {
  const agent = await startAgent(config, { log, metrics: new AgentMetrics().withProcessMetrics() });
  let signalled = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (signalled) {
        log.warn({ signal }, "second signal: exiting now");
        process.exit(1);
      }
      signalled = true;
      agent
        .shutdown(signal)
        .then(() => process.exit(0))
        .catch((error: unknown) => {
          log.error({ err: error }, "shutdown failed");
          process.exit(1);
        });
    });
  }
} catch (error) {
  log.fatal({ err: error }, "agent failed to start");
  console.error((error as Error).message);
  process.exit(1);
}
