import { env, EnvError } from "../env.ts";

/**
 * Node.js server start (loaded from instrumentation.ts): validate the environment before
 * the first request, and stop the process with a message naming the variable if it is
 * missing or malformed — a server that cannot reach its database must not report ready.
 */
export function checkEnvironmentAtBoot(): void {
  try {
    env();
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    console.error(`\n${error.message}\n`);
    process.exit(1);
  }
}
