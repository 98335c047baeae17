// Overhead of the runtime's pull path over plain ctr, on a real containerd (root only):
//   cd apps/agent && npx tsx src/runtimes/containerd/bench-pull-overhead.ts [runs=5]
// Each run starts from an empty content store (the image is removed with --sync in between),
// and the two variants alternate so that drift on the machine hits both alike.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type PhaseEvent } from "../runtime.ts";
import { ContainerdRuntime } from "./containerd-runtime.ts";
import { runTool } from "./run-tool.ts";
import { ensureContainerTools, httpGet, startLocalStack } from "./testing/local-stack.ts";

const runs = Number(process.argv[2] ?? 5);
if (process.getuid?.() !== 0) {
  console.error("bench-pull-overhead: containerd needs root");
  process.exit(2);
}

await ensureContainerTools();
const stack = await startLocalStack({ imageName: "thaw/bench" });
try {
  const ctr = (...args: string[]) =>
    runTool(
      { file: "ctr", args: ["-a", stack.address, "-n", stack.namespace, ...args] },
      { what: `ctr ${args.slice(0, 2).join(" ")}`, timeoutMs: 60_000 },
    );
  const runtime = new ContainerdRuntime({
    address: stack.address,
    namespace: stack.namespace,
    logDir: stack.logDir,
    plainHttpRegistries: [stack.registryHost],
    stopGraceSeconds: 0,
  });
  const { ref, httpPort, readinessPath } = stack.image;
  const url = `http://127.0.0.1:${httpPort}${readinessPath}`;
  const forgetImage = async () => {
    await ctr("images", "rm", "--sync", ref);
    const left = (await ctr("content", "ls", "-q")).stdout.trim();
    if (left) throw new Error(`content store not empty between runs: ${left}`);
  };

  const runtimeRuns: { total: number; phases: Record<string, number> }[] = [];
  const plainRuns: { toRun: number; toReady: number }[] = [];

  for (let i = 0; i < runs; i++) {
    // The runtime's pull path: pull → create → start (probe until 200) → ready.
    {
      const events: PhaseEvent[] = [];
      const replicaId = randomUUID();
      const t0 = performance.now();
      await runtime.startReplica(
        {
          replicaId,
          coldStartId: randomUUID(),
          path: "pull",
          deployment: { imageRef: ref },
          gpus: [],
          readiness: { port: httpPort, path: readinessPath, timeoutSeconds: 30 },
        },
        (e) => events.push(e),
      );
      const total = (performance.now() - t0) / 1000;
      runtimeRuns.push({
        total,
        phases: Object.fromEntries(events.map((e) => [e.phase, e.seconds])),
      });
      await runtime.stopReplica(replicaId);
      await forgetImage();
    }
    // Plain ctr: images pull + run -d, then the same readiness check done by hand (5 ms polls).
    {
      const id = `plain-${i}`;
      const t0 = performance.now();
      await ctr("images", "pull", "--plain-http", ref);
      await ctr("run", "-d", "--net-host", "--null-io", ref, id);
      const toRun = (performance.now() - t0) / 1000;
      for (;;) {
        const ok = await httpGet(url).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ok) break;
        await sleep(5);
      }
      const toReady = (performance.now() - t0) / 1000;
      plainRuns.push({ toRun, toReady });
      await ctr("tasks", "kill", "-s", "SIGKILL", id);
      for (let tries = 0; tries < 100; tries++) {
        if (
          await ctr("tasks", "delete", id).then(
            () => true,
            () => false,
          )
        )
          break;
        await sleep(20);
      }
      await ctr("containers", "delete", id);
      await forgetImage();
    }
  }

  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  const ms = (s: number) => `${(s * 1000).toFixed(1)} ms`;
  const runtimeMedian = median(runtimeRuns.map((r) => r.total));
  const plainReady = median(plainRuns.map((r) => r.toReady));
  const plainRun = median(plainRuns.map((r) => r.toRun));
  console.log(`image ${ref} (${stack.image.bytes} bytes), ${runs} runs each, cold content store`);
  console.log(
    `runtime pull path, call → ready marker:        median ${ms(runtimeMedian)}  [${runtimeRuns.map((r) => ms(r.total)).join(", ")}]`,
  );
  for (const phase of ["pull", "create", "start", "ready"]) {
    console.log(
      `  ${phase.padEnd(7)} median ${ms(median(runtimeRuns.map((r) => r.phases[phase] ?? 0)))}`,
    );
  }
  console.log(
    `plain ctr pull + run -d, until run returns:     median ${ms(plainRun)}  [${plainRuns.map((r) => ms(r.toRun)).join(", ")}]`,
  );
  console.log(
    `plain ctr pull + run -d, until GET 200:         median ${ms(plainReady)}  [${plainRuns.map((r) => ms(r.toReady)).join(", ")}]`,
  );
  console.log(
    `overhead of the runtime vs plain (to 200):      ${ms(runtimeMedian - plainReady)} (${((runtimeMedian / plainReady - 1) * 100).toFixed(0)}%)`,
  );
} finally {
  await stack.stop();
}
