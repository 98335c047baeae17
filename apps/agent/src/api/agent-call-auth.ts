import { type KeyObject } from "node:crypto";
import {
  AGENT_CALL_MAX_SKEW_SECONDS,
  type SignedAgentCall,
  parseAgentCallPublicKey,
  verifyAgentCall,
} from "@thaw/node-agent-client";

// What the agent's API trusts: the scheduler's public keys (learned at join, or pinned by the
// operator's THAW_AGENT_CALL_PUBLIC_KEY), and a memory of the nonces of calls it accepted
// within the clock window, so a recorded call cannot be played again while its timestamp is
// still fresh. In process memory on purpose: the window is the agent's own clock's, and a
// restarted agent starts a new window of at most two minutes.

export class AgentCallKeys {
  private readonly byText = new Map<string, KeyObject>();

  /** @param pinned The operator's key: when set, keys named at join are ignored. */
  constructor(private readonly pinned?: string) {
    if (pinned) this.byText.set(pinned, parseAgentCallPublicKey(pinned));
  }

  /**
   * Takes the key a join answer named and returns the one the host is to trust: the
   * operator's pinned key when there is one (the answer's is then ignored), else that key.
   */
  accept(text: string): string {
    if (this.pinned) return this.pinned;
    if (!this.byText.has(text)) this.byText.set(text, parseAgentCallPublicKey(text));
    return text;
  }

  /** The key that signed the call (its text), or null. */
  verify(
    signed: SignedAgentCall,
    call: { method: string; path: string; body: Uint8Array },
    now = Date.now(),
  ): string | null {
    for (const [text, key] of this.byText) {
      if (verifyAgentCall([key], signed, call, now) === null) return text;
    }
    return null;
  }

  get size(): number {
    return this.byText.size;
  }
}

/** Nonces kept at most: far above the calls a scheduler makes to one agent in two minutes. */
const NONCES_KEPT = 200_000;

export class NonceCache {
  /** nonce → when it may be forgotten (ms); insertion order is expiry order. */
  private readonly seen = new Map<string, number>();

  /** Records the nonce; false when it was seen within the window (a replay). */
  remember(nonce: string, now = Date.now()): boolean {
    if (this.seen.has(nonce)) return false;
    if (this.seen.size >= NONCES_KEPT) this.prune(now);
    // Still full of live nonces: the oldest go first (their calls are the nearest to stale).
    while (this.seen.size >= NONCES_KEPT) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(nonce, now + 2 * AGENT_CALL_MAX_SKEW_SECONDS * 1000);
    return true;
  }

  prune(now = Date.now()): void {
    for (const [nonce, expires] of this.seen) {
      if (expires > now) break;
      this.seen.delete(nonce);
    }
  }
}
