import { readFileSync, readdirSync } from "node:fs";

// Where a benchmark's CPU went, from Linux's own accounting (/proc): the CPU seconds each
// process (or every process of one program) used, and how busy the machine was. A bench
// takes one reading before and one after the window it measures; the difference says which
// process spends what per unit of work, and whether the machine's cores were saturated.

/** Clock ticks per second of /proc's utime/stime (USER_HZ: 100 on every Linux in use). */
const TICKS_PER_SECOND = 100;

export interface CpuReading {
  /** CPU seconds (user + system) per named group of processes. */
  seconds: Record<string, number>;
  /** Busy and total core-seconds of the whole machine (/proc/stat). */
  machineBusySeconds: number;
  machineTotalSeconds: number;
  atMs: number;
}

/** One group: a fixed set of pids, or every process whose command name is `command`. */
export type ProcessGroup = { pids: number[] } | { command: string };

/**
 * utime + stime of a process, plus cutime + cstime: what its children that already exited
 * and were reaped used (a postmaster's backends, which come and go within a window).
 */
function processSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces) start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime, stime, cutime, cstime are fields 14-17 of stat(5); index 0 here is field 3.
    const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
    return ticks / TICKS_PER_SECOND;
  } catch {
    return 0; // exited since it was listed
  }
}

function pidsOfCommand(command: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === command;
      } catch {
        return false;
      }
    });
}

function machineSeconds(): { busy: number; total: number } {
  const [cpuLine] = readFileSync("/proc/stat", "utf8").split("\n");
  // user nice system idle iowait irq softirq steal ...: idle and iowait are not busy.
  const values = cpuLine!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = values[3]! + values[4]!;
  return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

/** This process's CPU seconds come from Node itself (its threads included). */
export const THIS_PROCESS = "this process";

export function readCpu(groups: Record<string, ProcessGroup>): CpuReading {
  const seconds: Record<string, number> = {};
  for (const [name, group] of Object.entries(groups)) {
    const pids = "pids" in group ? group.pids : pidsOfCommand(group.command);
    seconds[name] = pids.reduce((sum, pid) => sum + processSeconds(pid), 0);
  }
  const usage = process.cpuUsage();
  seconds[THIS_PROCESS] = (usage.user + usage.system) / 1e6;
  const machine = machineSeconds();
  return {
    seconds,
    machineBusySeconds: machine.busy,
    machineTotalSeconds: machine.total,
    atMs: performance.now(),
  };
}

export interface CpuWindow {
  windowSeconds: number;
  /** Cores the machine kept busy on average over the window (of `cores`). */
  busyCores: number;
  cores: number;
  /** CPU seconds each group used in the window. */
  seconds: Record<string, number>;
}

export function cpuBetween(before: CpuReading, after: CpuReading): CpuWindow {
  const windowSeconds = (after.atMs - before.atMs) / 1000;
  const machineTotal = after.machineTotalSeconds - before.machineTotalSeconds;
  const cores = windowSeconds > 0 ? Math.round(machineTotal / windowSeconds) : 0;
  return {
    windowSeconds,
    busyCores:
      windowSeconds > 0
        ? (after.machineBusySeconds - before.machineBusySeconds) / windowSeconds
        : 0,
    cores,
    seconds: Object.fromEntries(
      Object.entries(after.seconds).map(([name, value]) => [
        name,
        value - (before.seconds[name] ?? 0),
      ]),
    ),
  };
}

/**
 * The benches' rates, with the one that loads each of this machine's `cores` as `rate` would
 * load `projectCores` (200 events/s on 16 cores: 25 on 2), in ascending order. A rate that
 * saturates these cores measures queueing that more cores remove; the same load per core,
 * measured here, is the projection of its latency onto the larger shape. Ascending, so the
 * projection's round is not run in the backlog (history jobs, vacuum) a saturating one leaves.
 */
export function withSameLoadRate(
  rates: readonly number[],
  rate: number,
  cores: number,
  projectCores: number,
): { rates: number[]; sameLoadRate: number } {
  const sameLoadRate = Math.max(1, Math.round((rate * cores) / projectCores));
  return { rates: [...new Set([...rates, sameLoadRate])].sort((a, b) => a - b), sameLoadRate };
}
