import { generateAgentCallKeyPair, parseAgentCallPrivateKey } from "@thaw/node-agent-client";

/**
 * The scheduler's agent-call key pair for one test file (each file is its own module graph):
 * the private half in the test scheduler's THAW_AGENT_CALL_KEY, the public half answered by
 * the test control plane's joins, so the sim agents it starts accept the scheduler's calls.
 */
export const TEST_AGENT_CALL_KEYS = generateAgentCallKeyPair();

/** The private half as the scheduler's env parses it. */
export const TEST_AGENT_CALL_KEY = parseAgentCallPrivateKey(TEST_AGENT_CALL_KEYS.privateKey);
