import { AgentError } from "../agent-error.ts";

/** Shut when the agent is stopping: from then on the host takes no new work. */
export class ShutdownGate {
  private shut = false;

  get isShut(): boolean {
    return this.shut;
  }

  shutNow(): void {
    this.shut = true;
  }

  /** Throws AgentError `shutting_down` (503: the scheduler tries another node) once shut. */
  refuseNewWork(message: string): void {
    if (this.shut) throw new AgentError("shutting_down", message);
  }
}
