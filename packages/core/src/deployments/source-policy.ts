import { IMAGE_REFERENCE } from "@thaw/protocol";
import ipaddr from "ipaddr.js";

// What a deployment may point at (ARCHITECTURE.md §6): user-supplied registries and model sources
// are checked against an allow-list of schemes and a host policy, so that no agent is ever
// told to fetch from a loopback, private, link-local or cloud-metadata address. The check is
// on the text: a public name that resolves to a private address is the fetcher's to refuse.
// ipaddr.js only, no Node API: the deploy wizard runs these checks in the browser too.

/** Schemes a model source may use. */
export const MODEL_SOURCE_SCHEMES = ["hf", "s3", "gs", "https"] as const;

/** Names that are internal by construction (metadata services answer under several). */
const INTERNAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa|intranet|lan)$/;
const METADATA_NAMES = new Set(["metadata", "instance-data", "metadata.google.internal"]);

/**
 * Whether an address is on the public internet: ipaddr.js's "unicast" range, which leaves
 * out loopback, private, link-local, carrier-grade NAT, documentation, benchmarking,
 * multicast and reserved ranges. The IPv6 forms that carry an IPv4 address (mapped, NAT64,
 * 6to4, Teredo, SIIT) are refused outright: a fetcher may route them to the IPv4 inside.
 */
function isPublicAddress(text: string): boolean {
  return ipaddr.parse(splitZone(text)[0]).range() === "unicast";
}

/** An IPv6 zone as Node's `net.isIP` takes it (`fe80::1%eth0`). */
const ZONE = /^[0-9a-zA-Z.:-]+$/;

/**
 * Whether text is an IP address as Node's `net.isIP` reads it (a test holds the two to
 * agreement): a four-part decimal IPv4 address, or an IPv6 address, with a zone or not, whose
 * embedded IPv4 tail, if any, is four-part decimal too (ipaddr.js alone also takes
 * `::ffff:0x7f.0.0.1` and refuses a zone with '.', ':' or '-').
 */
export function isIpAddress(text: string): boolean {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return true;
  const [address = "", zone] = splitZone(text);
  if (zone !== undefined && !ZONE.test(zone)) return false;
  if (!ipaddr.IPv6.isValid(address)) return false;
  const tail = address.slice(address.lastIndexOf(":") + 1);
  return !tail.includes(".") || ipaddr.IPv4.isValidFourPartDecimal(tail);
}

/** An IPv6 text split at its zone: `fe80::1%eth0` → [`fe80::1`, `eth0`]. */
function splitZone(text: string): [string, string | undefined] {
  const at = text.indexOf("%");
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** A name that spells a non-public IPv4 address, as wildcard DNS (nip.io, sslip.io) serves it. */
const EMBEDDED_V4 = /(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})(?=[.-]|$)/g;

function embeddedPrivateV4(name: string): string | null {
  for (const m of name.matchAll(EMBEDDED_V4)) {
    const address = [m[1], m[2], m[3], m[4]].join(".");
    if (ipaddr.IPv4.isValidFourPartDecimal(address) && !isPublicAddress(address)) return address;
  }
  return null;
}

/**
 * Why a host may not be fetched from, or null when it may. `host` is a URL's hostname as
 * the WHATWG parser normalised it (so `2130706433` and `0x7f.1` have become `127.0.0.1`).
 */
export function nonPublicHostReason(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, "");
  const bare = name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
  if (bare === "") return "no host";
  if (isIpAddress(bare))
    return isPublicAddress(bare)
      ? null
      : `${bare} is a loopback, private, link-local, reserved or IPv4-translating address`;
  if (METADATA_NAMES.has(bare)) return `${bare} is a cloud metadata service`;
  if (INTERNAL_NAME.test(bare)) return `${bare} is an internal name`;
  if (!bare.includes(".")) return `${bare} is not a fully qualified public name`;
  const spelled = embeddedPrivateV4(bare);
  if (spelled) return `${bare} spells the non-public address ${spelled} (wildcard DNS)`;
  return null;
}

/** Lowercase bucket names as S3 and GCS define them. */
const BUCKET = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;
/** Hugging Face `owner/repo[/path]`. */
const HF_PATH = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}\/[A-Za-z0-9][A-Za-z0-9._-]{0,95}(\/[^\s]*)?$/;

/** Why a model source is refused, or null when it is allowed. */
export function modelSourceProblem(source: string): string | null {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(source)?.[1]?.toLowerCase();
  if (!scheme || !(MODEL_SOURCE_SCHEMES as readonly string[]).includes(scheme))
    return `use one of ${MODEL_SOURCE_SCHEMES.map((s) => `${s}://`).join(", ")}`;
  const rest = source.slice(scheme.length + 3);
  if (/[\s\\]/.test(source)) return "no whitespace or backslashes";
  // A path that climbs (`..`, or `.`) is refused, spelled out or percent-encoded: the fetcher
  // may join it onto a local directory.
  const climbs = rest.split("/").some((seg) => /^(?:\.|%2e){1,2}$/i.test(seg));
  switch (scheme) {
    case "hf":
      if (!HF_PATH.test(rest)) return "hf://<owner>/<repo>[/<file>]";
      return climbs ? "no '.' or '..' path segments" : null;
    case "s3":
    case "gs": {
      const bucket = rest.split("/")[0] ?? "";
      if (!BUCKET.test(bucket)) return `${scheme}://<bucket>/<key>: '${bucket}' is no bucket name`;
      return climbs ? "no '.' or '..' path segments" : null;
    }
    default: {
      let url: URL;
      try {
        url = new URL(source);
      } catch {
        return "not a URL";
      }
      if (url.username || url.password)
        return "no credentials in the URL (the agent's own credentials are used)";
      return nonPublicHostReason(url.hostname);
    }
  }
}

// The image-reference grammar is the agent protocol's (@thaw/protocol): the API refuses
// what an agent would refuse, so a deployment cannot be accepted and then never start.
export { IMAGE_REFERENCE };

/**
 * Registries (`host[:port]`) the operator trusts although their address is private: an
 * internal registry, set from the server's THAW_TRUSTED_REGISTRIES, never by a client. Empty
 * unless a server sets it (a browser bundle never does, so the wizard's own check is strict
 * and the server, which knows better, decides).
 */
let trustedRegistries: ReadonlySet<string> = new Set();

export function trustRegistries(hosts: Iterable<string>): void {
  trustedRegistries = new Set([...hosts].map((h) => h.toLowerCase()));
}

export function isTrustedRegistry(host: string): boolean {
  return trustedRegistries.has(host.toLowerCase());
}

/** Why an image reference is refused, or null when it is allowed. */
export function imageRefProblem(ref: string): string | null {
  const match = IMAGE_REFERENCE.exec(ref);
  if (!match) return "not an image reference: [registry/]name[:tag][@sha256:<64 hex>]";
  const first = match[1];
  // The first component is a registry when it looks like a host (docker's own rule).
  if (first === undefined) return null;
  const isHost = first.includes(".") || first.includes(":") || first === "localhost";
  if (!isHost || isTrustedRegistry(first)) return null;
  let hostname: string;
  try {
    hostname = new URL(`https://${first}`).hostname;
  } catch {
    return `registry '${first}' is not a host`;
  }
  const reason = nonPublicHostReason(hostname);
  return reason && `registry: ${reason}`;
}
