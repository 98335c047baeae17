import ipaddr from "ipaddr.js";

// Who the client is, for rate limits and logs: the TCP peer, unless the peer is a proxy the
// operator trusts (THAW_TRUSTED_PROXIES), in which case the X-Forwarded-For hops are walked
// from the right — each trusted hop vouches for the one before it — and the first address no
// trusted proxy stands behind is the client. A client can prepend anything to the header; it
// cannot change what its own connection's address is, so nothing it sends lifts a limit.

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

/** The address in a canonical form: IPv4-mapped IPv6 (::ffff:1.2.3.4) as plain IPv4. */
export function normalizeAddress(text: string): string | null {
  const trimmed = text.trim().replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(trimmed)) return null;
  return ipaddr.process(trimmed).toString();
}

function isTrusted(address: string, trusted: readonly Cidr[]): boolean {
  const parsed = ipaddr.process(address);
  return trusted.some(
    ([range, bits]) => range.kind() === parsed.kind() && parsed.match([range, bits] as never),
  );
}

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
  while (isTrusted(client, trusted) && hops.length > 0) {
    const next = normalizeAddress(hops.pop()!);
    if (!next) break;
    client = next;
  }
  return client;
}
