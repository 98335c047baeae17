import { existsSync, readFileSync, writeFileSync } from "node:fs";

/**
 * Join tokens handed to this agent, consumed one per new host. A used token is removed from
 * the file so that it is never offered twice (the control plane would refuse it anyway).
 */
export class JoinTokenPool {
  private tokens: string[];

  constructor(private readonly file: string | undefined) {
    this.tokens =
      file && existsSync(file)
        ? readFileSync(file, "utf8")
            .split("\n")
            .map((t) => t.trim())
            .filter(Boolean)
        : [];
  }

  take(): string | undefined {
    const token = this.tokens.shift();
    if (token !== undefined) this.save();
    return token;
  }

  /** Returns a token whose join never reached the control plane (or failed on its side). */
  putBack(token: string): void {
    this.tokens.unshift(token);
    this.save();
  }

  private save(): void {
    if (this.file)
      writeFileSync(this.file, this.tokens.join("\n") + (this.tokens.length ? "\n" : ""), {
        mode: 0o600,
      });
  }

  get remaining(): number {
    return this.tokens.length;
  }
}
