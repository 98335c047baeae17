import {
  type KeyObject,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  verify,
} from "node:crypto";
import { z } from "zod";

// Scheduler → agent calls are signed with an Ed25519 key only the scheduler holds
// (THAW_AGENT_CALL_KEY). Agents learn the public key when they join (the web tier holds
// only that, THAW_AGENT_CALL_PUBLIC_KEY) and verify every call: the signature covers the
// node it is meant for, the method, the path with its query, a SHA-256 of the body, a
// timestamp and a nonce. So a node's own credential (agent → control plane) opens nothing on
// any agent, a call for one node is refused by every other, a changed body or path is
// refused, and a recorded call is refused after AGENT_CALL_MAX_SKEW_SECONDS (and, within
// them, by the agent's nonce cache).
//
//   Authorization: ThawAgentCall node=<node id>, t=<unix seconds>, n=<nonce>, s=<signature>

export const AGENT_CALL_SCHEME = "ThawAgentCall";
/** How far a call's timestamp may be from the agent's clock, either way. */
export const AGENT_CALL_MAX_SKEW_SECONDS = 60;

export interface AgentCall {
  nodeId: string;
  method: string;
  /** The request target as sent: path and query (`/hosts/a/v1/replicas?x=1`). */
  path: string;
  /** The exact body bytes (empty for none). */
  body: string | Uint8Array;
}

export interface SignedAgentCall {
  nodeId: string;
  timestamp: number;
  nonce: string;
  signature: Buffer;
}

function signedBytes(call: AgentCall, timestamp: number, nonce: string): Buffer {
  const bodyHash = createHash("sha256").update(call.body).digest("hex");
  return Buffer.from(
    [
      "thaw-agent-call/v1",
      call.nodeId.toLowerCase(),
      call.method.toUpperCase(),
      call.path,
      bodyHash,
      String(timestamp),
      nonce,
    ].join("\n"),
  );
}

/** The Authorization header value for `call`, signed now with the scheduler's private key. */
export function signAgentCall(privateKey: KeyObject, call: AgentCall, now = Date.now()): string {
  const timestamp = Math.floor(now / 1000);
  const nonce = randomBytes(16).toString("base64url");
  const signature = sign(null, signedBytes(call, timestamp, nonce), privateKey).toString(
    "base64url",
  );
  return `${AGENT_CALL_SCHEME} node=${call.nodeId}, t=${timestamp}, n=${nonce}, s=${signature}`;
}

const HEADER = new RegExp(
  `^${AGENT_CALL_SCHEME} node=([0-9a-fA-F-]{36}), t=(\\d{1,12}), n=([A-Za-z0-9_-]{16,64}), s=([A-Za-z0-9_-]{80,100})$`,
);

/** The parts of a signed call's Authorization header, or null when it is not one. */
export function parseAgentCallAuthorization(header: string | undefined): SignedAgentCall | null {
  const match = HEADER.exec(header ?? "");
  if (!match) return null;
  return {
    nodeId: match[1]!.toLowerCase(),
    timestamp: Number(match[2]),
    nonce: match[3]!,
    signature: Buffer.from(match[4]!, "base64url"),
  };
}

export type AgentCallRefusal = "stale" | "bad_signature";

/**
 * Checks a signed call against the request as received. The caller checks that
 * `signed.nodeId` is the host addressed, and that the nonce was not seen before.
 */
export function verifyAgentCall(
  publicKeys: readonly KeyObject[],
  signed: SignedAgentCall,
  call: Omit<AgentCall, "nodeId">,
  now = Date.now(),
): AgentCallRefusal | null {
  if (Math.abs(now / 1000 - signed.timestamp) > AGENT_CALL_MAX_SKEW_SECONDS) return "stale";
  const bytes = signedBytes({ ...call, nodeId: signed.nodeId }, signed.timestamp, signed.nonce);
  return publicKeys.some((key) => verify(null, bytes, key, signed.signature))
    ? null
    : "bad_signature";
}

// --- keys: base64 DER (PKCS#8 private, SPKI public) or PEM, Ed25519 only --------------------

function decodeKey(text: string, kind: "private" | "public"): KeyObject {
  const trimmed = text.trim();
  const key = trimmed.startsWith("-----BEGIN")
    ? kind === "private"
      ? createPrivateKey(trimmed)
      : createPublicKey(trimmed)
    : kind === "private"
      ? createPrivateKey({ key: Buffer.from(trimmed, "base64"), format: "der", type: "pkcs8" })
      : createPublicKey({ key: Buffer.from(trimmed, "base64"), format: "der", type: "spki" });
  if (key.asymmetricKeyType !== "ed25519") throw new Error("not an Ed25519 key");
  return key;
}

export function parseAgentCallPrivateKey(text: string): KeyObject {
  return decodeKey(text, "private");
}

export function parseAgentCallPublicKey(text: string): KeyObject {
  return decodeKey(text, "public");
}

/** The public key as agents receive it: base64 of its SPKI DER. */
export function agentCallPublicKeyText(key: KeyObject): string {
  const publicKey = key.type === "private" ? createPublicKey(key) : key;
  return publicKey.export({ format: "der", type: "spki" }).toString("base64");
}

/** A new key pair, as the environment variables hold them (base64 DER). */
export function generateAgentCallKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    privateKey: privateKey.export({ format: "der", type: "pkcs8" }).toString("base64"),
    publicKey: agentCallPublicKeyText(publicKey),
  };
}

const HOW_TO_MAKE =
  "generate one with `openssl genpkey -algorithm ed25519 -outform DER | base64 -w0` (infra/dev/start.sh does)";

/** THAW_AGENT_CALL_KEY in an app's env.ts: the scheduler's private key. */
export const AgentCallPrivateKeyEnv = z
  .string({ error: `is not set: the scheduler's Ed25519 key for calling agents; ${HOW_TO_MAKE}` })
  .transform((text, ctx) => {
    try {
      return parseAgentCallPrivateKey(text);
    } catch {
      ctx.addIssue({
        code: "custom",
        message: `must be an Ed25519 private key (base64 PKCS#8 DER, or PEM); ${HOW_TO_MAKE}`,
      });
      return z.NEVER;
    }
  });

/** A public key (base64 SPKI DER or PEM), kept as the canonical base64 text. */
export const AgentCallPublicKeyText = z.string().transform((text, ctx) => {
  try {
    return agentCallPublicKeyText(parseAgentCallPublicKey(text));
  } catch {
    ctx.addIssue({
      code: "custom",
      message:
        "must be the Ed25519 public key of the scheduler's THAW_AGENT_CALL_KEY (base64 SPKI DER, or PEM): `openssl pkey -in <key> -pubout -outform DER | base64 -w0`",
    });
    return z.NEVER;
  }
});
