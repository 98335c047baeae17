import { X509Certificate } from "node:crypto";
import selfsigned from "selfsigned";

/** A self-signed EC certificate for a test's https server, and its SHA-256 pin. */
export async function testTlsCertificate(): Promise<{
  key: string;
  cert: string;
  certSha256: string;
}> {
  const pems = await selfsigned.generate([{ name: "commonName", value: "thaw-test-agent" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
  });
  const certSha256 = new X509Certificate(pems.cert).fingerprint256.replace(/:/g, "").toLowerCase();
  return { key: pems.private, cert: pems.cert, certSha256 };
}
