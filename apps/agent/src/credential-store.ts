import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const Stored = z.record(
  z.string(),
  z.object({
    nodeId: z.uuid(),
    credential: z.string(),
    /** The scheduler's public key the join answered (absent: stored by an older agent). */
    agentCallPublicKey: z.string().optional(),
    /** The certificate pinned at that join: another one means joining again. */
    certSha256: z.string().optional(),
  }),
);
export type StoredCredentials = z.infer<typeof Stored>;
export type StoredCredential = StoredCredentials[string];

/**
 * Per-host node credentials on local disk, so an agent restart keeps its nodes instead of
 * needing new join tokens. Written atomically (temp file + rename), readable by owner only.
 */
export class CredentialStore {
  private readonly file: string;
  private data: StoredCredentials;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, "credentials.json");
    this.data = existsSync(this.file)
      ? Stored.parse(JSON.parse(readFileSync(this.file, "utf8")))
      : {};
  }

  get(host: string) {
    return this.data[host];
  }

  set(host: string, value: StoredCredential): void {
    this.data[host] = value;
    this.flush();
  }

  delete(host: string): void {
    delete this.data[host];
    this.flush();
  }

  private flush(): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.data, null, 2), { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }
}
