import { type CaptureSnapshotRequest, type CaptureSnapshotResponse } from "@thaw/protocol";
import { AgentError } from "../agent-error.ts";
import { type HostRuntime } from "./host-runtime.ts";
import { type ReplicaLifecycle } from "./replica-lifecycle.ts";
import { type ShutdownGate } from "./shutdown-gate.ts";

/**
 * Snapshot captures of one host: a running replica is checkpointed (CRIU, cuda-checkpoint)
 * and then stops. A capture is keyed by its snapshot id, so the scheduler asking again (a
 * retried job) joins the capture already under way or gets its answer.
 */
export class SnapshotCaptures {
  private readonly captures = new Map<string, Promise<CaptureSnapshotResponse>>();

  constructor(
    private readonly runtime: HostRuntime,
    private readonly replicas: ReplicaLifecycle,
    private readonly gate: ShutdownGate,
  ) {}

  capture(request: CaptureSnapshotRequest): Promise<CaptureSnapshotResponse> {
    const known = this.captures.get(request.snapshotId);
    if (known) return known;
    this.gate.refuseNewWork("the agent is shutting down");
    const record = this.replicas.requireRunning(request.replicaId);
    if (this.runtime.capabilities && !this.runtime.capabilities().paths.includes("restore")) {
      throw new AgentError(
        "path_unsupported",
        "this host has no CRIU / cuda-checkpoint, so it cannot capture snapshots",
      );
    }
    const capture = this.runtime.captureSnapshot(request).then((captured) => {
      this.replicas.markStopped(record);
      return captured;
    });
    this.captures.set(request.snapshotId, capture);
    capture.catch(() => this.captures.delete(request.snapshotId));
    return capture;
  }
}
