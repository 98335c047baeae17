import { addressInCidrs, normalizeAddress, type Cidr } from "@thaw/core";

export { parseCidrList, type Cidr } from "@thaw/core";

// Who the client is, for rate limits and logs: the TCP peer, unless the peer is a proxy the
// operator trusts (THAW_TRUSTED_PROXIES), in which case the X-Forwarded-For hops are walked
// from the right — each trusted hop vouches for the one before it — and the first address no
// trusted proxy stands behind is the client. A client can prepend anything to the header; it
// cannot change what its own connection's address is, so nothing it sends lifts a limit.

/**
 * The client's address given the connection's peer and the X-Forwarded-For header (which
 * may repeat, hence joined), trusting only the listed proxies. Never throws; an unparsable
 * hop ends the walk at the last address that could be read.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: readonly Cidr[],
): string {
  let client = normalizeAddress(peer ?? "") ?? "unknown";
  if (trusted.length === 0 || client === "unknown") return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : (forwardedFor ?? ""))
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  while (addressInCidrs(client, trusted) && hops.length > 0) {
    const next = normalizeAddress(hops.pop()!);
    if (!next) break;
    client = next;
  }
  return client;
}
