import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../env.ts";
import { enqueue, type SchedulerQueues } from "../queues.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import {
  type SchedulerTestStack,
  startSchedulerTestStack,
} from "../testing/scheduler-test-stack.ts";
import { TEST_AGENT_CALL_KEYS } from "../testing/agent-call-keys.ts";

// A scheduler process killed (SIGKILL) in the middle of a scale-up loses nothing: another
// process finishes the work — from BullMQ's stalled-job recovery and the sweep over Postgres —
// with every replica ready on its own GPU and no cold start left open.

const HOSTS = 3;
const SCHEDULER_DIR = fileURLToPath(new URL("../..", import.meta.url));

describe("a scheduler killed mid-job", () => {
  const testDb = useTestDatabase();
  const prefix = `test-killed-${Date.now()}`;
  let stack: SchedulerTestStack;
  let child: ChildProcess | undefined;
  let survivor: RunningScheduler | undefined;
  let queues: SchedulerQueues;
  let endpointId: string;
  let childOutput = "";

  const db = () => testDb.current.db;
  const env = {
    DATABASE_URL: "",
    REDIS_URL: process.env.REDIS_URL ?? "",
    THAW_QUEUE_PREFIX: prefix,
    THAW_AGENT_CALL_KEY: TEST_AGENT_CALL_KEYS.privateKey,
    LOG_LEVEL: "warn",
  };

  beforeAll(async () => {
    env.DATABASE_URL = testDb.current.url;
    // Slow enough (a 1B pull of ~40 simulated seconds takes ~2 s) to be killed in the middle.
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: HOSTS,
      agentPrefix: "kl",
      agentEnv: { THAW_SIM_TIME_FACTOR: "20" },
    });
    ({ endpointId, queues } = stack);
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await survivor?.stop();
    await stack?.close();
  });

  it("finishes the scale-up in another process", { timeout: 240_000 }, async () => {
    // One process: the tsx CLI would run the scheduler in a child of its own, which a
    // SIGKILL of the CLI leaves running — the "killed" scheduler would live on.
    child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: SCHEDULER_DIR,
      env: { PATH: process.env.PATH, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => (childOutput += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (childOutput += d.toString()));
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: HOSTS } });
    await enqueue(queues, "reconcile", { endpointId });

    // Killed as soon as it has placed work: starts in flight, jobs held under its locks.
    await expect
      .poll(() => db().coldStart.count({ where: { endpointId } }), {
        timeout: 30_000,
        message: childOutput,
      })
      .toBeGreaterThan(0);
    child.kill("SIGKILL");
    await new Promise((resolve) => child!.once("exit", resolve));
    expect(() => process.kill(child!.pid!, 0)).toThrow(/ESRCH/); // truly dead, not orphaned
    const readyAtKill = await db().replica.count({ where: { endpointId, state: "ready" } });
    expect(readyAtKill).toBeLessThan(HOSTS);

    survivor = await startScheduler(loadEnv(env), pino({ level: "silent" }), { sweepMs: 1_000 });
    // The dead process's jobs come back once BullMQ finds them stalled: their locks lapse
    // (lockDuration) and the next stalled check moves them back to wait.
    const t0 = Date.now();
    await expect
      .poll(() => db().replica.count({ where: { endpointId, state: "ready" } }), {
        timeout: 150_000,
        interval: 500,
      })
      .toBe(HOSTS);
    console.error(
      `killed-scheduler: every replica ready ${((Date.now() - t0) / 1000).toFixed(1)} s after the survivor started`,
    );
    const reservations = await db().gpuReservation.findMany();
    expect(reservations).toHaveLength(HOSTS);
    expect(new Set(reservations.map((r) => r.nodeId)).size).toBe(HOSTS);
    // Every cold start is closed: none left scheduled or dispatched by the dead process.
    await expect
      .poll(() =>
        db().coldStart.count({
          where: { endpointId, status: { in: ["scheduled", "dispatched", "running"] } },
        }),
      )
      .toBe(0);
  });
});
