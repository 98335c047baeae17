import type { DbClient } from "@thaw/db";

// The operator's view of the whole fleet for Prometheus (the scheduler's /metrics): GPUs by
// what holds them, and the warm pools' idle GPUs. Across every org on purpose — it is the
// operator's endpoint, behind the operator's token, and carries no tenant ids or names: only
// GPU models and states, so its label sets stay a handful whatever the fleet's size.

/** What a GPU is doing, from its reservation's replica (or its node's state when not ready). */
export type FleetGpuState = "serving" | "starting" | "warm" | "draining" | "free" | "not_ready";

export interface FleetGauges {
  gpus: { gpuModel: string; state: FleetGpuState; count: number }[];
  warmPool: {
    gpuModel: string;
    replicas: number;
    gpus: number;
    /** GPU-seconds the current warm replicas have held idle since they last served. */
    idleGpuSeconds: number;
  }[];
}

const RESERVED_STATE: Record<string, FleetGpuState> = {
  pending: "starting",
  placed: "starting",
  starting: "starting",
  ready: "serving",
  warm: "warm",
  draining: "draining",
};

export async function readFleetGauges({ db }: { db: DbClient }): Promise<FleetGauges> {
  const [nodes, reserved, warm] = await Promise.all([
    db.$queryRaw<{ gpuModel: string; ready: boolean; gpus: number }[]>`
      SELECT "gpuModel", state = 'ready' AS ready, sum("gpuCount")::int AS gpus
      FROM "Node" WHERE state <> 'terminated' GROUP BY 1, 2`,
    db.$queryRaw<{ gpuModel: string; replicaState: string; gpus: number }[]>`
      SELECT n."gpuModel", r.state::text AS "replicaState", count(*)::int AS gpus
      FROM "GpuReservation" g
      JOIN "Node" n ON n.id = g."nodeId" AND n.state = 'ready'
      JOIN "Replica" r ON r.id = g."replicaId"
      GROUP BY 1, 2`,
    db.$queryRaw<{ gpuModel: string; replicas: number; gpus: number; idle: number }[]>`
      SELECT n."gpuModel", count(DISTINCT r.id)::int AS replicas, count(g.id)::int AS gpus,
        coalesce(sum(extract(epoch FROM now() - coalesce(r."lastActiveAt", r."updatedAt"))), 0)::float8 AS idle
      FROM "Replica" r
      JOIN "Node" n ON n.id = r."nodeId"
      LEFT JOIN "GpuReservation" g ON g."replicaId" = r.id
      WHERE r.state = 'warm'
      GROUP BY 1`,
  ]);
  const counts = new Map<string, number>();
  const add = (gpuModel: string, state: FleetGpuState, n: number) => {
    const key = `${gpuModel}\u0000${state}`;
    counts.set(key, (counts.get(key) ?? 0) + n);
  };
  const readyGpus = new Map<string, number>();
  for (const row of nodes) {
    if (row.ready) readyGpus.set(row.gpuModel, (readyGpus.get(row.gpuModel) ?? 0) + row.gpus);
    else add(row.gpuModel, "not_ready", row.gpus);
  }
  const reservedOn = new Map<string, number>();
  for (const row of reserved) {
    add(row.gpuModel, RESERVED_STATE[row.replicaState] ?? "draining", row.gpus);
    reservedOn.set(row.gpuModel, (reservedOn.get(row.gpuModel) ?? 0) + row.gpus);
  }
  for (const [gpuModel, total] of readyGpus)
    add(gpuModel, "free", Math.max(0, total - (reservedOn.get(gpuModel) ?? 0)));
  return {
    gpus: [...counts].map(([key, count]) => {
      const [gpuModel, state] = key.split("\u0000") as [string, FleetGpuState];
      return { gpuModel, state, count };
    }),
    // Each warm replica's idle seconds times its GPUs (the join repeats the replica per GPU).
    warmPool: warm.map((w) => ({
      gpuModel: w.gpuModel,
      replicas: w.replicas,
      gpus: w.gpus,
      idleGpuSeconds: w.idle,
    })),
  };
}
