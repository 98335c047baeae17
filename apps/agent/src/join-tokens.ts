import { existsSync, readFileSync, writeFileSync } from "node:fs";

/** Where a host gets the join token it presents (the agent's pool, or one token of its own). */
export interface JoinTokenSource {
  take(): string | undefined;
  putBack(token: string): void;
}

/** The one token a host was launched with (a sim cloud host, like a cloud-init user-data). */
export class SingleJoinToken implements JoinTokenSource {
  constructor(private token: string | undefined) {}
  take(): string | undefined {
    const token = this.token;
    this.token = undefined;
    return token;
  }
  putBack(token: string): void {
    this.token = token;
  }
}

/**
 * Join tokens handed to this agent, consumed one per new host. A used token is removed from
 * the file so that it is never offered twice (the control plane would refuse it anyway).
 */
export class JoinTokenPool implements JoinTokenSource {
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
