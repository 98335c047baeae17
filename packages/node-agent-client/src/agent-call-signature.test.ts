import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  AgentCallPrivateKeyEnv,
  AgentCallPublicKeyText,
  generateAgentCallKeyPair,
  parseAgentCallAuthorization,
  parseAgentCallPrivateKey,
  signAgentCall,
} from "./agent-call-signature.ts";

describe("agent call keys and headers", () => {
  it("read a key pair as base64 DER or PEM, and only Ed25519", () => {
    const pair = generateAgentCallKeyPair();
    const key = AgentCallPrivateKeyEnv.parse(pair.privateKey);
    expect(AgentCallPublicKeyText.parse(pair.publicKey)).toBe(pair.publicKey);
    const pem = key.export({ format: "pem", type: "pkcs8" }).toString();
    expect(parseAgentCallPrivateKey(pem).asymmetricKeyType).toBe("ed25519");
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey;
    const rsaText = rsa.export({ format: "der", type: "pkcs8" }).toString("base64");
    expect(AgentCallPrivateKeyEnv.safeParse(rsaText).success).toBe(false);
    expect(AgentCallPrivateKeyEnv.safeParse("not a key").success).toBe(false);
    expect(AgentCallPublicKeyText.safeParse(pair.privateKey).success).toBe(false);
  });

  it("parse only the scheme's own header, never a bearer token", () => {
    const key = parseAgentCallPrivateKey(generateAgentCallKeyPair().privateKey);
    const nodeId = "0190A5C4-0000-7000-8000-00000000000A";
    const header = signAgentCall(key, { nodeId, method: "get", path: "/v1/inventory", body: "" });
    expect(parseAgentCallAuthorization(header)).toMatchObject({ nodeId: nodeId.toLowerCase() });
    expect(parseAgentCallAuthorization(`Bearer ${header}`)).toBeNull();
    expect(parseAgentCallAuthorization("Bearer thawnode_0123456789ab_secret")).toBeNull();
    expect(parseAgentCallAuthorization(undefined)).toBeNull();
  });
});
