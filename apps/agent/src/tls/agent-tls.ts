import { X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { certificateSha256 } from "@thaw/node-agent-client";
import selfsigned from "selfsigned";

// The agent's TLS identity: an EC P-256 key and a self-signed certificate made at first start
// in the state directory, kept across restarts. No CA vouches for it: the agent sends the
// certificate's SHA-256 when it joins, the control plane stores it on the node, and the
// scheduler talks to no other certificate at that node's address. So the certificate names
// no host and its validity dates are not what protects it (its key is).

export interface AgentTls {
  key: string;
  cert: string;
  /** SHA-256 of the certificate's DER, hex: what the agent pins at join. */
  certSha256: string;
}

const VALID_YEARS = 10;

export async function loadOrCreateAgentTls(stateDir: string): Promise<AgentTls> {
  const dir = join(stateDir, "tls");
  const keyFile = join(dir, "agent-key.pem");
  const certFile = join(dir, "agent-cert.pem");
  if (!existsSync(keyFile) || !existsSync(certFile)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const notBeforeDate = new Date(Date.now() - 60_000);
    const notAfterDate = new Date(notBeforeDate.getTime() + VALID_YEARS * 365 * 86_400_000);
    const pems = await selfsigned.generate([{ name: "commonName", value: "thaw-agent" }], {
      keyType: "ec",
      curve: "P-256",
      algorithm: "sha256",
      notBeforeDate,
      notAfterDate,
    });
    // The key first, then the certificate: a crash in between leaves no certificate, so the
    // pair is made again rather than a certificate without its key.
    writeAtomically(keyFile, pems.private, 0o600);
    writeAtomically(certFile, pems.cert, 0o644);
  }
  const key = readFileSync(keyFile, "utf8");
  const cert = readFileSync(certFile, "utf8");
  return { key, cert, certSha256: certificateSha256(new X509Certificate(cert).raw) };
}

function writeAtomically(file: string, text: string, mode: number): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, file);
}
