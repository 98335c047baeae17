// `pnpm --silent bench:agent-pull [--runs 7] [--payload-mb 100,100]`: the overhead of the
// agent's pull path (`ctr images pull`, `ctr run -d`, containerd's API for everything else, the
// readiness probe) over plain `ctr images pull` + `ctr run -d` of the same image and the same
// container (and, for reference, the barest `ctr run -d --null-io`) until it answers 200, on
// a real containerd + registry (root only; installs the Debian packages it needs). Each run
// starts from an empty content store (the image is removed with --sync in between), and the
// three variants alternate so that drift on the machine hits them alike. One JSON document on
// stdout; the human summary on stderr. Target (issue 22, part 4): ratio <= 1.05. Then the
// warm handover of a parked replica, the agent's against plain `ctr tasks resume` + probe.
import { randomUUID } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type PhaseEvent } from "../runtime.ts";
import { ctrCommands, DEFAULT_TOOL_PATHS } from "./commands.ts";
import { ContainerdRuntime } from "./containerd-runtime.ts";
import { runTool } from "./run-tool.ts";
import { ensureContainerTools, httpGet, startLocalStack } from "./testing/local-stack.ts";

const runsFlag = process.argv.indexOf("--runs");
const runs = runsFlag >= 0 ? Number(process.argv[runsFlag + 1]) : 7;
if (!Number.isInteger(runs) || runs < 1 || runs > 100) {
  console.error("bench:agent-pull: --runs must be an integer from 1 to 100");
  process.exit(2);
}
const payloadFlag = process.argv.indexOf("--payload-mb");
const payloadLayers =
  payloadFlag >= 0 ? (process.argv[payloadFlag + 1] ?? "").split(",").map(Number) : [];
if (payloadLayers.some((mb) => !Number.isFinite(mb) || mb <= 0 || mb > 4096)) {
  console.error(
    "bench:agent-pull: --payload-mb takes sizes in MB, e.g. 100,100,100 (one layer each)",
  );
  process.exit(2);
}
if (process.getuid?.() !== 0) {
  console.error("bench:agent-pull: containerd needs root; run it as root");
  process.exit(2);
}

await ensureContainerTools();
const stack = await startLocalStack({
  imageName: "thaw/bench",
  payloadLayers: payloadLayers.map((mb) => Math.round(mb * 1024 * 1024)),
});
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
  /** The readiness check done by hand for the plain variants: GET every 5 ms until a 200. */
  const untilReady = async () => {
    while (
      !(await httpGet(url).then(
        (r) => r.status === 200,
        () => false,
      ))
    )
      await sleep(5);
  };
  const forgetImage = async () => {
    await ctr("images", "rm", "--sync", ref);
    const left = (await ctr("content", "ls", "-q")).stdout.trim();
    if (left) throw new Error(`content store not empty between runs: ${left}`);
  };

  const runtimeRuns: { total: number; phases: Record<string, number> }[] = [];
  const plainRuns: { toRun: number; toReady: number }[] = [];
  const bareRuns: { toRun: number; toReady: number }[] = [];
  const commands = ctrCommands(DEFAULT_TOOL_PATHS, {
    address: stack.address,
    namespace: stack.namespace,
  });

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
    // Plain ctr, twice: the same container the agent makes (its confinement flags: seccomp,
    // no raw sockets, the log file), and the barest `run -d --null-io`. Each: images pull +
    // run -d, then the same readiness check done by hand (5 ms polls).
    for (const [variant, out] of [
      ["same", plainRuns],
      ["bare", bareRuns],
    ] as const) {
      const id = `plain-${variant}-${i}`;
      const runArgs =
        variant === "same"
          ? commands
              .containerRun(
                { id, imageRef: ref, labels: {}, env: {}, gpus: [] },
                path.join(stack.logDir, `${id}.log`),
              )
              .args.slice(4)
          : ["run", "-d", "--net-host", "--null-io", ref, id];
      const t0 = performance.now();
      await ctr("images", "pull", "--plain-http", ref);
      await ctr(...runArgs);
      const toRun = (performance.now() - t0) / 1000;
      await untilReady();
      const toReady = (performance.now() - t0) / 1000;
      out.push({ toRun, toReady });
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

  // Warm handover of a parked replica: the agent's warm path (Tasks.Resume over the API, the
  // probe) against plain `ctr tasks resume` + the same readiness check, alternating.
  const handoverRuns: number[] = [];
  const plainResumeRuns: number[] = [];
  {
    const startOf = (replicaId: string, warmReplicaId?: string) => ({
      replicaId,
      coldStartId: randomUUID(),
      path: warmReplicaId ? ("warm" as const) : ("pull" as const),
      ...(warmReplicaId ? { warmReplicaId } : {}),
      deployment: { imageRef: ref },
      gpus: [],
      readiness: { port: httpPort, path: readinessPath, timeoutSeconds: 30 },
    });
    let current = randomUUID();
    // A handed-over replica keeps the parked one's container.
    const containerId = current;
    await runtime.startReplica(startOf(current), () => undefined);
    for (let i = 0; i < runs * 2; i++) {
      await runtime.parkReplica({ replicaId: current });
      const next = randomUUID();
      const t0 = performance.now();
      await runtime.startReplica(startOf(next, current), () => undefined);
      handoverRuns.push((performance.now() - t0) / 1000);
      current = next;
      await ctr("tasks", "pause", containerId);
      const t1 = performance.now();
      await ctr("tasks", "resume", containerId);
      await untilReady();
      plainResumeRuns.push((performance.now() - t1) / 1000);
    }
    await runtime.stopReplica(current);
  }

  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  const ms = (s: number) => `${(s * 1000).toFixed(1)} ms`;
  const round = (s: number) => Math.round(s * 10_000) / 10;
  const runtimeMedian = median(runtimeRuns.map((r) => r.total));
  const plainReady = median(plainRuns.map((r) => r.toReady));
  const plainRun = median(plainRuns.map((r) => r.toRun));
  const bareReady = median(bareRuns.map((r) => r.toReady));
  const phases = Object.fromEntries(
    ["pull", "create", "start", "ready"].map((phase) => [
      phase,
      round(median(runtimeRuns.map((r) => r.phases[phase] ?? 0))),
    ]),
  );
  const ratio = runtimeMedian / plainReady;
  console.error(
    [
      `image ${ref} (${stack.image.bytes} bytes, ${stack.image.layers} layers), ${runs} runs each, cold content store`,
      `agent pull path, call → ready:      median ${ms(runtimeMedian)}  [${runtimeRuns.map((r) => ms(r.total)).join(", ")}]`,
      `  phases (median ms): ${JSON.stringify(phases)}`,
      `plain ctr pull + run -d (same container), to return: median ${ms(plainRun)}`,
      `plain ctr pull + run -d (same container), to GET 200: median ${ms(plainReady)}  [${plainRuns.map((r) => ms(r.toReady)).join(", ")}]`,
      `plain ctr, bare run -d --null-io, to GET 200: median ${ms(bareReady)}  [${bareRuns.map((r) => ms(r.toReady)).join(", ")}]`,
      `warm handover, agent (${handoverRuns.length} runs): median ${ms(median(handoverRuns))}; plain ctr tasks resume + GET 200: median ${ms(median(plainResumeRuns))}`,
      `ratio agent / plain (same container): ${ratio.toFixed(3)} (target <= 1.05); agent / bare run: ${(runtimeMedian / bareReady).toFixed(3)}`,
    ].join("\n"),
  );
  console.log(
    JSON.stringify({
      image: { ref, bytes: stack.image.bytes, layers: stack.image.layers },
      runs,
      agentPullPath: {
        medianMs: round(runtimeMedian),
        runsMs: runtimeRuns.map((r) => round(r.total)),
        phasesMedianMs: phases,
      },
      plainCtr: {
        toReadyMedianMs: round(plainReady),
        toRunReturnMedianMs: round(plainRun),
        runsMs: plainRuns.map((r) => round(r.toReady)),
        container: "the agent's: --net-host --cap-drop CAP_NET_RAW --seccomp --log-uri file://…",
      },
      plainCtrBare: {
        toReadyMedianMs: round(bareReady),
        runsMs: bareRuns.map((r) => round(r.toReady)),
        container: "run -d --net-host --null-io",
      },
      ratioToBare: Math.round((runtimeMedian / bareReady) * 1000) / 1000,
      warmHandover: {
        agentMedianMs: round(median(handoverRuns)),
        plainCtrResumeMedianMs: round(median(plainResumeRuns)),
        ratio: Math.round((median(handoverRuns) / median(plainResumeRuns)) * 1000) / 1000,
      },
      ratio: Math.round(ratio * 1000) / 1000,
      target: { maxRatio: 1.05, met: ratio <= 1.05 },
    }),
  );
} finally {
  await stack.stop();
}
