import { z } from "zod";

// Version negotiation at join: an agent says which version of this protocol it speaks, and
// the control plane refuses a version it does not, naming the field, before the join token is
// spent (so the same token works once the agent is upgraded). Bump AGENT_PROTOCOL_VERSION for
// a change an agent or control plane of the previous version would misread; adding optional
// fields is not such a change.

/** The version of the agent protocol this code speaks. */
export const AGENT_PROTOCOL_VERSION = 1;

/** The versions a control plane built from this code takes at join. */
export const SUPPORTED_AGENT_PROTOCOL_VERSIONS: readonly number[] = [AGENT_PROTOCOL_VERSION];

/** Agents built before the join carried a version spoke the first one. */
const VERSION_OF_AN_UNVERSIONED_JOIN = 1;

export const AgentProtocolVersion = z.number().int().min(1).max(65_535);

/**
 * Why a control plane of this code will not take an agent that speaks `version` (undefined:
 * an agent older than the field), or null when it will.
 */
export function agentProtocolVersionProblem(version: number | undefined): string | null {
  const spoken = version ?? VERSION_OF_AN_UNVERSIONED_JOIN;
  if (SUPPORTED_AGENT_PROTOCOL_VERSIONS.includes(spoken)) return null;
  return `the agent speaks protocol version ${spoken}; this control plane speaks ${SUPPORTED_AGENT_PROTOCOL_VERSIONS.join(", ")}: run an agent of the control plane's release`;
}
