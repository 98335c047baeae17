import { type CaptureSnapshotRequest } from "@thaw/protocol";
import { engineCall } from "../replica-http.ts";
import { LABEL_SNAPSHOT } from "./commands.ts";
import { type ContainerdHost } from "./host.ts";
import { toggleCuda } from "./restore-path.ts";

/**
 * Capture (the other half of restore): put the engine to sleep (vLLM level 1 keeps weights in
 * host memory, level 2 drops them: a 3.4 GB instead of 11.4 GB image, field notes §3), move each
 * CUDA process's GPU state into host memory (`cuda-checkpoint --toggle`), CRIU-dump the container
 * into a checkpoint image (`ctr containers checkpoint --task --rw`), label it with the snapshot id,
 * push it to the operator's snapshot store and answer with its manifest digest.
 */
export async function captureCheckpoint(
  host: ContainerdHost,
  containerId: string,
  port: number,
  request: CaptureSnapshotRequest,
): Promise<{ pushed: boolean; digest: string }> {
  const sleepCall = request.engineSleep ?? { path: `/sleep?level=${request.sleepLevel}` };
  await engineCall(port, sleepCall, {
    what: "put the engine to sleep",
    timeoutMs: host.config.timeouts.engineCallSeconds * 1000,
  });
  await toggleCuda(host, containerId, "running", undefined);
  await host.run(
    host.ctr.checkpointCreate(containerId, request.checkpointRef),
    "checkpoint the container (CRIU dump)",
    {
      timeout: "checkpointSeconds",
      hint: "CRIU's dump.log is in the task's work directory under containerd's state dir; the container must have been created checkpointable",
    },
  );
  await host.run(
    host.ctr.imageLabel(request.checkpointRef, LABEL_SNAPSHOT, request.snapshotId),
    "label the checkpoint image with its snapshot id",
  );
  if (request.push) {
    await host.run(
      host.ctr.imagePush(request.checkpointRef, {
        plainHttp: host.plainHttp(request.checkpointRef),
      }),
      "push the checkpoint image to the snapshot store",
      { timeout: "pushSeconds" },
    );
  }
  // The digest of the index as written (a push sends it unchanged): restores fetch by it.
  const digest = await host.imageDigest(request.checkpointRef);
  return { pushed: request.push, digest };
}
