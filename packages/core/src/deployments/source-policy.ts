import { isIP } from "node:net";

// What a deployment may point at (DESIGN.md §6): user-supplied registries and model sources
// are checked against an allow-list of schemes and a host policy, so that no agent is ever
// told to fetch from a loopback, private, link-local or cloud-metadata address. The check is
// on the text: a public name that resolves to a private address is the fetcher's to refuse.

/** Schemes a model source may use. */
export const MODEL_SOURCE_SCHEMES = ["hf", "s3", "gs", "https"] as const;

/** Names that are internal by construction (metadata services answer under several). */
const INTERNAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa|intranet|lan)$/;
const METADATA_NAMES = new Set(["metadata", "instance-data", "metadata.google.internal"]);

/** IPv4 ranges that are not the public internet (RFC 6890 and friends). */
const NON_PUBLIC_V4: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

function v4ToInt(address: string): number {
  return address.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
}

function isPublicV4(address: string): boolean {
  const n = v4ToInt(address);
  return !NON_PUBLIC_V4.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    const start = v4ToInt(base);
    return n >= start && n < start + size;
  });
}

function isPublicV6(address: string): boolean {
  const a = address.toLowerCase();
  // An IPv4-mapped or -translated address is as public as the IPv4 address inside it.
  const mapped = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return isPublicV4(mapped[1]!);
  if (/^::(ffff:)?[0-9a-f:]*$/.test(a)) return false; // ::, ::1, and ::ffff:hex forms
  const first = parseInt(a.split(":")[0] || "0", 16);
  if ((first & 0xffc0) === 0xfe80) return false; // link-local fe80::/10
  if ((first & 0xfe00) === 0xfc00) return false; // unique local fc00::/7 (incl. fd00:ec2::254)
  if ((first & 0xff00) === 0xff00) return false; // multicast
  return true;
}

/**
 * Why a host may not be fetched from, or null when it may. `host` is a URL's hostname as
 * the WHATWG parser normalised it (so `2130706433` and `0x7f.1` have become `127.0.0.1`).
 */
export function nonPublicHostReason(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, "");
  const bare = name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
  if (bare === "") return "no host";
  const family = isIP(bare);
  if (family === 4)
    return isPublicV4(bare)
      ? null
      : `${bare} is a loopback, private, link-local or reserved address`;
  if (family === 6)
    return isPublicV6(bare)
      ? null
      : `${bare} is a loopback, private, link-local or reserved address`;
  if (METADATA_NAMES.has(bare)) return `${bare} is a cloud metadata service`;
  if (INTERNAL_NAME.test(bare)) return `${bare} is an internal name`;
  if (!bare.includes(".")) return `${bare} is not a fully qualified public name`;
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
  switch (scheme) {
    case "hf":
      return HF_PATH.test(rest) ? null : "hf://<owner>/<repo>[/<file>]";
    case "s3":
    case "gs": {
      const bucket = rest.split("/")[0] ?? "";
      return BUCKET.test(bucket)
        ? null
        : `${scheme}://<bucket>/<key>: '${bucket}' is no bucket name`;
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

/**
 * The one grammar of an image reference, for the API, the scheduler and the agent alike
 * (distribution/reference, narrowed): `[registry[:port]/]path[:tag][@sha256:<64 hex>]`.
 * Registry components start and end with a letter or digit (no `-k/…` or `.x.com/…` that
 * a command line could read as an option or a relative host); registries are named, not
 * IPv6 literals; path components are lowercase. Anything the agent would refuse is refused
 * here first, so a deployment cannot be accepted and then never start.
 */
export const IMAGE_REFERENCE =
  /^(?:((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]{1,5})?)\/)?([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}))?$/;

/** Why an image reference is refused, or null when it is allowed. */
export function imageRefProblem(ref: string): string | null {
  const match = IMAGE_REFERENCE.exec(ref);
  if (!match) return "not an image reference: [registry/]name[:tag][@sha256:<64 hex>]";
  const first = match[1];
  // The first component is a registry when it looks like a host (docker's own rule).
  if (first === undefined) return null;
  const isHost = first.includes(".") || first.includes(":") || first === "localhost";
  if (!isHost) return null;
  let hostname: string;
  try {
    hostname = new URL(`https://${first}`).hostname;
  } catch {
    return `registry '${first}' is not a host`;
  }
  const reason = nonPublicHostReason(hostname);
  return reason && `registry: ${reason}`;
}
