import agentPackage from "../../package.json" with { type: "json" };

/**
 * The agent's version as it reports it (join, heartbeat, inventory): its package's, so the
 * two cannot disagree. The GPU host's bundle ships apps/agent/package.json beside the source.
 */
export const AGENT_VERSION: string = agentPackage.version;
