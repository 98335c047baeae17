// `node --import tsx src/cli/agent-certificate.ts`: prints the SHA-256 of this agent's TLS
// certificate (in THAW_AGENT_STATE_DIR, default .data/agent), making the key and certificate
// first if there are none — what the agent pins at join. Operators compare it with a node's
// pin; infra/dev/start.sh gives it to the scheduler for the sim cloud before the agent runs.
import { loadEnv } from "../env.ts";
import { loadOrCreateAgentTls } from "../tls/agent-tls.ts";

try {
  const { stateDir } = loadEnv();
  process.stdout.write(`${(await loadOrCreateAgentTls(stateDir)).certSha256}\n`);
} catch (error) {
  process.stderr.write(
    `agent-certificate: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(2);
}
