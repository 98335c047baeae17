import { loadEnv } from "./env.ts";
import { createLogger } from "./logger.ts";
import { startScheduler } from "./scheduler.ts";

let env;
try {
  env = loadEnv();
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const log = createLogger(env.LOG_LEVEL);
const scheduler = await startScheduler(env, log).catch((error: Error) => {
  log.fatal({ err: error.message }, "scheduler could not start");
  process.exit(1);
});

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    scheduler.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: String(error) }, "unclean shutdown");
        process.exit(1);
      },
    );
  });
}
