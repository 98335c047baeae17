import { runJob, type ReplayJob } from "./replay-run.ts";

// A bench:replay worker process: receives one job, sends back each policy's result as it is
// done, then exits. Forked by cli.ts, one per core.

process.once("message", (job: ReplayJob) => {
  try {
    for (const done of runJob(job)) process.send!({ kind: "result", ...done });
    process.send!({ kind: "done" }, () => process.exit(0));
  } catch (error) {
    process.send!({ kind: "error", message: (error as Error).message }, () => process.exit(1));
  }
});
