import { isAgentErrorCode } from "@thaw/protocol";
import ipaddr from "ipaddr.js";
import { z } from "zod";

// Agents are addressed, not self-described: the control plane dials a node's agent only at
// `http(s)://<ip>:<port>` (plus the sim agent's `/hosts/<name>` prefix), an IP inside the
// operator's agent networks (THAW_AGENT_CIDRS) or, when none are configured, the address the
// join request came from. A node that names a hostname, a path, a query, credentials, a
// link-local or metadata address, or somebody else's address is refused: it would turn the
// scheduler's calls (with a node bearer) into requests at a target of its choosing.

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses a comma-separated CIDR list (a bare address is a /32 or /128); throws on junk. */
export function parseCidrList(text: string): Cidr[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      if (entry.includes("/")) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === "ipv4" ? 32 : 128] as Cidr;
    });
}

/** An environment variable holding a CIDR list (empty when unset), for the apps' env.ts. */
export function cidrListEnv(example: string) {
  return z
    .string()
    .default("")
    .transform((text, ctx) => {
      try {
        return parseCidrList(text);
      } catch {
        ctx.addIssue({
          code: "custom",
          message: `must be comma-separated CIDRs or addresses, ${example}`,
        });
        return z.NEVER;
      }
    });
}

/** The address in a canonical form (IPv4-mapped IPv6 as plain IPv4), or null. */
export function normalizeAddress(text: string): string | null {
  const trimmed = text.trim().replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(trimmed)) return null;
  return ipaddr.process(trimmed).toString();
}

export function addressInCidrs(address: string, cidrs: readonly Cidr[]): boolean {
  const parsed = ipaddr.process(address);
  return cidrs.some(
    ([range, bits]) => range.kind() === parsed.kind() && parsed.match([range, bits] as never),
  );
}

/** Ranges no agent is ever dialled in, whatever the operator's CIDRs say. */
const NEVER = new Set(["unspecified", "linkLocal", "multicast", "broadcast"]);
/**
 * Cloud metadata endpoints outside link-local: AWS's IPv6 IMDS, Alibaba Cloud's, Oracle
 * Cloud's legacy one. (169.254.169.254, the others', is link-local.)
 */
const METADATA_ADDRESSES = new Set(["fd00:ec2::254", "100.100.100.200", "192.0.0.192"]);

const HOST_PREFIX = /^\/hosts\/[A-Za-z0-9._-]{1,128}$/;

export interface AgentNetwork {
  /** THAW_AGENT_CIDRS: where agents may be; empty: the join request's own address. */
  agentCidrs: readonly Cidr[];
  /** The address the join request came from (the request edge's client address). */
  sourceAddress?: string | undefined;
}

/** Why the control plane must not dial `url` as a node's agent, or null. */
export function agentUrlProblem(url: string, network: AgentNetwork): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL http(s)://<ip>:<port>";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return "must be http:// or https://";
  if (parsed.username || parsed.password) return "must not carry credentials";
  if (parsed.search || parsed.hash || url.includes("?") || url.includes("#"))
    return "must not carry a query or fragment";
  if (!parsed.port) return "must name its port explicitly, e.g. http://10.0.1.7:7070";
  const path = parsed.pathname.replace(/\/$/, "");
  if (path !== "" && !HOST_PREFIX.test(path))
    return "may have no path but the agent's /hosts/<name> prefix";
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(host)) return "must be an IP address, not a host name";
  const address = ipaddr.process(host);
  if (NEVER.has(address.range()) || METADATA_ADDRESSES.has(address.toString()))
    return `${address.toString()} is a ${address.range()} or metadata address`;
  const ip = address.toString();
  if (network.agentCidrs.length > 0) {
    if (!addressInCidrs(ip, network.agentCidrs))
      return `${ip} is outside the agent networks (THAW_AGENT_CIDRS)`;
    return null;
  }
  if (network.sourceAddress === undefined) return null;
  const source = normalizeAddress(network.sourceAddress);
  if (source !== ip)
    return `${ip} is not the address this join came from (${source ?? "unknown"}); set THAW_AGENT_CIDRS to let agents name another`;
  return null;
}

/** Request fields that carry an image reference (the protocol's ImageReference). */
const IMAGE_FIELD = /(^|\.)(imageRef|estargzImageRef|checkpointRef)$/;

/** What the scheduler asked the agent to do, as a tenant reads it. */
export type AgentAction = "start" | "park" | "capture";

/**
 * What a tenant may read about an agent that refused or failed a call: a class, one of the
 * protocol's error codes, and a fixed message — never the text the far end answered (which is
 * any server's answer when the address was not an agent's). The full error goes to the
 * operator's log.
 */
export function classifyAgentFailure(
  error: { status: number; code: string; field?: string | undefined },
  action: AgentAction = "start",
): string {
  // Only the protocol's own codes (AGENT_ERRORS): anything else in an answer's `code` was
  // chosen by whatever listens at the node's address, so it reads `unknown`, like an answer
  // that was not the protocol's at all.
  const code = isAgentErrorCode(error.code) ? error.code : "unknown";
  if (error.status === 0) return "agent_unreachable: the node's agent did not answer";
  if (error.status === 421) return "agent_address_refused: the node's agent address is not allowed";
  if (error.status === 400 && error.field !== undefined && IMAGE_FIELD.test(error.field))
    return `image_refused: the node's agent refused the image reference of this ${action}`;
  if (error.status >= 400 && error.status < 500)
    return `agent_refused (${code}): the node's agent refused this ${action}`;
  return `agent_error (${code}): the node's agent failed`;
}

/**
 * Why a request the control plane built fails the agent protocol's schema (its first issue):
 * such a request can never be sent, on any node. An image reference outside the protocol's
 * grammar is `image_refused`; anything else `request_refused`. The text is the schema's own.
 */
export function protocolRefusal(
  issue: { path: readonly PropertyKey[]; message: string } | undefined,
): string {
  const field = issue?.path.map(String).join(".") || "request";
  const kind = IMAGE_FIELD.test(field) ? "image_refused" : "request_refused";
  return `${kind}: ${field}: ${issue?.message ?? "invalid"}`;
}
