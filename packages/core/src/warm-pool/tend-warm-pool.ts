import { directSql, Prisma, prismaRows, type DbClient, type DbTransaction } from "@thaw/db";
import {
  DEFAULT_WARM_POOL_SETTINGS,
  enumerateStartOptions,
  idleForSeconds,
  optionPredictor,
  planWarmPool,
  effectiveWaitPrice,
  warmPoolActions,
  type IdleTimeHistogram,
  type WarmPoolPlan,
  type WarmPoolSettings,
} from "../scheduling/index.ts";
import {
  loadDeploymentStartInputs,
  loadSchedulingNodes,
} from "../placement/load-placement-state.ts";
import { schedulingDeployment, schedulingEndpoint } from "../placement/scheduling-inputs.ts";
import { lockNodesSql } from "../placement/lock-nodes.ts";
import { replicaReasonData } from "../placement/replica-reason.ts";
import { planSleep } from "../sleeping/choose-sleep-level.ts";
import { engineSleepCalls, type EngineSleepCalls } from "../sleeping/engine-sleep-calls.ts";
import { type BestNonWarm, type BestNonWarmMemo } from "./best-non-warm-memo.ts";
import { readSharedBestNonWarm, shareBestNonWarm } from "./shared-best-non-warm.ts";
import type { TimedReads } from "./timed-reads.ts";
import {
  loadOrgIdleTimes,
  loadWarmPoolMemory,
  saveWarmPoolMemory,
  warmPoolMemoryOf,
  type MemoryRow,
  type WarmPoolMemory,
  type OrgIdleTimesMemo,
} from "./warm-pool-memory.ts";

// The warm-pool worker's use case (ARCHITECTURE.md §3 step 7, §5): load the endpoint's replicas and
// its idle-time histogram, plan with the pure policy (planWarmPool → warmPoolActions), and
// write what Postgres can decide alone. The agent calls (park, stop) are the worker's; it
// finishes each with finishReplicaPark / finishReplicaStop.

export interface WarmPoolOptions {
  /**
   * GPUs an org's warm pools may hold beyond what minReplicas forces (0: no warm pool), for
   * orgs that set no warmPoolGpuBudget of their own (the operator's THAW_WARM_POOL_GPU_BUDGET).
   */
  gpuBudget: number;
  settings?: Partial<WarmPoolSettings>;
  /** The org-wide idle times, read once a while per org (a scheduler's); else read per tend. */
  orgIdleTimes?: OrgIdleTimesMemo;
  /** Each endpoint's miss cost, predicted once a while (a scheduler's); else per tend. */
  bestNonWarm?: BestNonWarmMemo;
  /**
   * The GPUs each org's warm pools hold, counted once a while (a scheduler's, for tendings
   * that change nothing); else counted per tend.
   */
  orgPooledGpus?: TimedReads<number>;
}

/** A replica whose GPUs count against its org's warm-pool budget (alias r). */
const POOLED_REPLICA_SQL = Prisma.sql`(r.state = 'warm'
  OR (r.prewarm AND r.state IN ('pending', 'placed', 'starting', 'ready'))
  OR (r.state = 'draining' AND r."drainIntent" = 'park_candidate'))`;

/** The GPUs the org's warm pools hold: parked, pre-warming, and being parked. */
async function loadOrgPooledGpus(db: DbClient, orgId: string): Promise<number> {
  const [row] = await directSql(db).rows<{ held: number }>(Prisma.sql`
    SELECT count(*)::int AS held FROM "GpuReservation" g JOIN "Replica" r ON r.id = g."replicaId"
    WHERE r."orgId" = ${orgId}::uuid AND ${POOLED_REPLICA_SQL}`);
  return row?.held ?? 0;
}

export interface TendWarmPoolResult {
  plan: Pick<WarmPoolPlan, "warmReplicas" | "reason"> | null;
  /** Park on their node, then finishReplicaPark. */
  toPark: { replicaId: string; nodeId: string }[];
  /**
   * Released from the warm pool but kept asleep (already `draining`, sleep_candidate): sleep
   * their engines on their node with these calls, then finishReplicaSleep.
   */
  toSleep: ({
    replicaId: string;
    nodeId: string;
    sleepLevel: 1 | 2;
    sleepingBytes: number;
  } & EngineSleepCalls)[];
  /** Stop on their node (already `draining`), then finishReplicaStop. */
  toStop: { replicaId: string; nodeId: string | null }[];
  /** Pre-warm replicas created `pending`: each needs a place job. */
  toPlace: string[];
}

const STARTING = ["pending", "placed", "starting"] as const;

export async function tendWarmPool({
  db,
  endpointId,
  options,
  now = new Date(),
}: {
  db: DbClient;
  endpointId: string;
  options: WarmPoolOptions;
  now?: Date;
}): Promise<TendWarmPoolResult> {
  // What a miss would cost is predicted before the transaction: it reads the org's nodes,
  // snapshots and history and runs the physics, none of which needs the endpoint's row lock,
  // and a scale request waits on that lock for as long as a tend holds it. Inside, it is used
  // only if the endpoint still runs the deployment it was predicted for. A scheduler takes
  // the figure it remembers, else the one another scheduler shared, else predicts it.
  const memo = options.bestNonWarm;
  const known = memo
    ? (memo.fresh(endpointId) ?? (await readSharedBestNonWarm(db, endpointId, memo, now)))
    : undefined;
  if (known) return tendWith(db, endpointId, options, known, now);
  const made = await predictBeforeLock(db, endpointId);
  const lifetimeMs = made && memo ? memo.remember(endpointId, made) : 0;
  const result = await tendWith(db, endpointId, options, made, now);
  // Shared once the tending has written the endpoint's warm-pool row, unless the tending
  // found the endpoint on another deployment than the one predicted (and forgot it).
  if (made && memo?.fresh(endpointId))
    await shareBestNonWarm(db, endpointId, made, lifetimeMs, now);
  return result;
}

/** A tending with the miss cost known (null: none, when the endpoint cannot start warm). */
async function tendWith(
  db: DbClient,
  endpointId: string,
  options: WarmPoolOptions,
  predicted: BestNonWarm | null,
  now: Date,
): Promise<TendWarmPoolResult> {
  const settings = { ...DEFAULT_WARM_POOL_SETTINGS, ...options.settings };
  const unchanged = await tendingWithoutChange(db, endpointId, options, settings, predicted, now);
  if (unchanged) return unchanged;
  return db.$transaction(
    async (tx) => {
      // Under the endpoint's row lock, like reconcile: neither sees the other half-done.
      const [locked] = await tx.$queryRaw<{ id: string }[]>`
        SELECT id::text FROM "Endpoint" WHERE id = ${endpointId}::uuid FOR NO KEY UPDATE`;
      const nothing: TendWarmPoolResult = {
        plan: null,
        toPark: [],
        toSleep: [],
        toStop: [],
        toPlace: [],
      };
      if (!locked) return nothing;
      const endpoint = await tx.endpoint.findUniqueOrThrow({
        where: { id: endpointId },
        include: { org: { select: { gpuSecondsPerWaitSecond: true, warmPoolGpuBudget: true } } },
      });
      const replicas = await tx.replica.findMany({
        where: {
          endpointId,
          state: { in: [...STARTING, "ready", "warm", "sleeping", "draining"] },
        },
        orderBy: { updatedAt: "asc" },
      });
      // A sleeper on a node that is no longer ready (drained, lost) can never be woken.
      const asleepOn = replicas.flatMap((r) =>
        r.state === "sleeping" && r.nodeId ? [r.nodeId] : [],
      );
      const readyNodeIds = new Set(
        asleepOn.length === 0
          ? []
          : (
              await tx.node.findMany({
                where: { id: { in: asleepOn }, state: "ready" },
                select: { id: true },
              })
            ).map((n) => n.id),
      );
      const memory = await loadWarmPoolMemory(prismaRows(tx), endpointId);
      const orgIdleTimes = options.orgIdleTimes
        ? await options.orgIdleTimes.load(tx, endpoint.orgId, memory.tracker.histogram)
        : await loadOrgIdleTimes(tx, endpoint.orgId, endpointId);
      // The org's budget less what its other endpoints' pools hold now.
      const heldElsewhere = await tx.gpuReservation.count({
        where: {
          replica: {
            orgId: endpoint.orgId,
            endpointId: { not: endpointId },
            OR: [
              { state: "warm" },
              { prewarm: true, state: { in: [...STARTING, "ready"] } },
              { state: "draining", drainIntent: "park_candidate" },
            ],
          },
        },
      });
      const decision = decideTending({
        endpointId,
        endpoint,
        org: endpoint.org,
        replicas,
        readyNodeIds,
        memory,
        orgIdleTimes,
        heldElsewhere,
        predicted,
        options,
        settings,
        now,
      });
      // A remembered prediction for a deployment the endpoint no longer runs is made again
      // at its next tending.
      if (predicted && predicted.deploymentId !== decision.current)
        options.bestNonWarm?.forget(endpointId);
      const {
        current,
        sleepAllowed,
        ofCurrent,
        plan,
        actions,
        stale,
        keptPrewarmed,
        parked,
        notParked,
        released,
        bestNonWarmSeconds,
      } = decision;
      // A replica the pool lets go — a scale-down it does not park (no budget, no worth), or a
      // parked one whose keep-alive is over — whose engine can sleep, on a node with the memory
      // for it, sleeps there instead of stopping: its GPUs go back either way, and a later
      // start may wake it.
      const { toSleep, evicted } =
        sleepAllowed && current !== null
          ? await sleepersAmong(
              tx,
              [...notParked, ...released].filter(ofCurrent),
              await tx.deployment.findUnique({ where: { id: current } }),
            )
          : { toSleep: [], evicted: [] };
      const sleeping = new Set(toSleep.map((s) => s.replicaId));
      // Sleepers evicted for them (of any endpoint on those nodes) are stopped: only those
      // still asleep, so one a start is waking meanwhile is left alone.
      const evictedNow =
        evicted.length === 0
          ? []
          : await tx.replica.updateManyAndReturn({
              where: { id: { in: evicted.map((e) => e.id) }, state: "sleeping" },
              data: {
                state: "draining",
                stateVersion: { increment: 1 },
                ...replicaReasonData({ drainIntent: "keep_alive_over" }),
              },
              select: { id: true, nodeId: true },
            });
      if (toSleep.length > 0)
        await tx.replica.updateMany({
          where: { id: { in: [...sleeping] } },
          data: {
            state: "draining",
            stateVersion: { increment: 1 },
            ...replicaReasonData({ drainIntent: "sleep_candidate" }),
          },
        });
      const toStop = [
        ...notParked.filter((r) => !sleeping.has(r.id)),
        ...released.filter((r) => !sleeping.has(r.id)),
        ...stale,
        ...evictedNow,
      ];
      if (toStop.length > 0)
        await tx.replica.updateMany({
          where: { id: { in: toStop.map((r) => r.id) } },
          data: {
            state: "draining",
            stateVersion: { increment: 1 },
            ...replicaReasonData({ drainIntent: "keep_alive_over" }),
          },
        });
      const toPlace: string[] = [];
      if (actions.prewarm > 0 && current) {
        const rows = await tx.replica.createManyAndReturn({
          data: Array.from({ length: actions.prewarm }, () => ({
            orgId: endpoint.orgId,
            endpointId,
            deploymentId: current,
            state: "pending" as const,
            prewarm: true,
          })),
          select: { id: true },
        });
        toPlace.push(...rows.map((r) => r.id));
      }
      await saveWarmPoolMemory(prismaRows(tx), endpoint, {
        tracker: memory.tracker,
        bestNonWarmSeconds,
      });
      const withNode = (r: { id: string; nodeId: string | null }) => ({
        replicaId: r.id,
        nodeId: r.nodeId,
      });
      return {
        plan: { warmReplicas: plan.warmReplicas, reason: plan.reason },
        toPark: [...parked, ...keptPrewarmed.filter((r) => r.state === "ready")]
          .filter((r) => r.nodeId !== null)
          .map((r) => ({ replicaId: r.id, nodeId: r.nodeId! })),
        toSleep,
        toStop: toStop.map(withNode),
        toPlace,
      };
    },
    { timeout: 30_000 },
  );
}

/** A replica as the tending decides on it (a Prisma row in the locked path, JSON in the read). */
interface TendedReplica {
  id: string;
  state: string;
  deploymentId: string;
  prewarm: boolean;
  drainIntent: string | null;
  nodeId: string | null;
}

/**
 * The tending's decision from what it read (pure): which replicas are stale, parked, let go
 * or pre-warmed under the plan. The locked path acts on it; the read without the lock
 * (tendingWithoutChange) uses it only to see that there is nothing to act on.
 */
function decideTending<R extends TendedReplica>(input: {
  endpointId: string;
  endpoint: {
    deletedAt: Date | null;
    activeDeploymentId: string | null;
    allowedPaths: readonly string[];
    minReplicas: number;
    maxReplicas: number;
    gpuCount: number;
    gpuSecondsPerWaitSecond: number | null;
  };
  org: { gpuSecondsPerWaitSecond: number | null; warmPoolGpuBudget: number | null };
  /** The endpoint's replicas in a state the pool weighs, least recently changed first. */
  replicas: R[];
  /** Which of the sleepers' nodes are ready. */
  readyNodeIds: ReadonlySet<string>;
  memory: WarmPoolMemory;
  orgIdleTimes: IdleTimeHistogram | null;
  /** GPUs the org's other endpoints' pools hold now. */
  heldElsewhere: number;
  predicted: BestNonWarm | null;
  options: WarmPoolOptions;
  settings: WarmPoolSettings;
  now: Date;
}) {
  const { endpoint, replicas, memory, settings } = input;
  // The objective this endpoint is tended to: its price of waiting (its own, else its
  // org's default, else the platform's) and its org's budget (else the operator's).
  const waitPrice = effectiveWaitPrice(
    endpoint.gpuSecondsPerWaitSecond,
    input.org.gpuSecondsPerWaitSecond,
  );
  const orgGpuBudget = input.org.warmPoolGpuBudget ?? input.options.gpuBudget;
  const current = endpoint.activeDeploymentId;
  const enabled =
    endpoint.deletedAt === null && current !== null && endpoint.allowedPaths.includes("warm");
  const ofCurrent = (r: { deploymentId: string }) => r.deploymentId === current;
  const starting = (r: R) => ([...STARTING, "ready"] as string[]).includes(r.state);
  const busy = replicas.filter((r) => !r.prewarm && ofCurrent(r) && starting(r)).length;
  const warm = replicas.filter((r) => r.state === "warm");
  const candidates = replicas.filter(
    (r) => r.state === "draining" && r.drainIntent === "park_candidate",
  );
  const prewarmed = replicas.filter((r) => r.prewarm && starting(r));
  const sleepAllowed = enabled && endpoint.allowedPaths.includes("wake");
  const asleep = replicas.filter((r) => r.state === "sleeping");
  // What no longer fits the endpoint is stopped whatever the plan says.
  const stale = [
    ...warm.filter((r) => !enabled || !ofCurrent(r)),
    ...prewarmed.filter((r) => !enabled || !ofCurrent(r)),
    ...asleep.filter(
      (r) => !sleepAllowed || !ofCurrent(r) || !r.nodeId || !input.readyNodeIds.has(r.nodeId),
    ),
  ];
  const keptWarm = warm.filter((r) => !stale.includes(r));
  const keptPrewarmed = prewarmed.filter((r) => !stale.includes(r));
  const idleFor = idleForSeconds(memory.tracker, input.now.getTime());
  const bestNonWarmSeconds =
    (enabled && input.predicted?.deploymentId === current ? input.predicted.seconds : null) ??
    memory.bestNonWarmSeconds ??
    settings.fullValueMissSeconds;
  const [plan] = planWarmPool({
    endpoints: [
      {
        endpointId: input.endpointId,
        histogram: memory.tracker.histogram,
        ...(input.orgIdleTimes ? { priorHistogram: input.orgIdleTimes } : {}),
        idleForSeconds: idleFor,
        busyReplicas: busy,
        minReplicas: enabled ? endpoint.minReplicas : 0,
        maxReplicas: enabled ? endpoint.maxReplicas : 0,
        gpusPerReplica: endpoint.gpuCount,
        bestNonWarmSeconds,
        gpuSecondsPerWaitSecond: waitPrice.value,
      },
    ],
    gpuBudget: Math.max(0, orgGpuBudget - input.heldElsewhere),
    settings,
  });
  const actions = warmPoolActions({
    plan: plan!,
    idleForSeconds: idleFor,
    warm: keptWarm.map((r) => r.id),
    incoming: keptPrewarmed.length,
    surplusReady: candidates.length,
  });
  const parked = candidates.slice(0, actions.park);
  const notParked = candidates.slice(actions.park);
  const released = keptWarm.filter((r) => actions.release.includes(r.id));
  return {
    current,
    sleepAllowed,
    ofCurrent,
    plan: plan!,
    actions,
    stale,
    keptPrewarmed,
    parked,
    notParked,
    released,
    bestNonWarmSeconds,
    /** Nothing to write or call: the plan keeps every replica where it is. */
    changesNothing:
      stale.length === 0 &&
      parked.length === 0 &&
      notParked.length === 0 &&
      released.length === 0 &&
      actions.prewarm === 0 &&
      !keptPrewarmed.some((r) => r.state === "ready") &&
      bestNonWarmSeconds === memory.bestNonWarmSeconds,
  };
}

/**
 * Most tendings change nothing: the parked replicas stay parked, nothing falls due. That is
 * seen here from one statement without the endpoint's lock (the endpoint, its org, its
 * replicas, its memory and the org's pooled GPUs, all of one snapshot), and such a tending
 * ends without a transaction; any other is made again under the lock, which decides what is
 * done. On bench:warm-handover the sweeps' tendings were the schedulers' largest share of
 * statements — a dozen each, for every endpoint every 15 s.
 */
async function tendingWithoutChange(
  db: DbClient,
  endpointId: string,
  options: WarmPoolOptions,
  settings: WarmPoolSettings,
  predicted: BestNonWarm | null,
  now: Date,
): Promise<TendWarmPoolResult | null> {
  const [row] = await directSql(db).rows<{
    orgId: string;
    deletedAt: Date | null;
    activeDeploymentId: string | null;
    allowedPaths: string[];
    minReplicas: number;
    maxReplicas: number;
    gpuCount: number;
    gpuSecondsPerWaitSecond: number | null;
    orgGpuSecondsPerWaitSecond: number | null;
    orgWarmPoolGpuBudget: number | null;
    replicas: (TendedReplica & { nodeReady: boolean | null })[];
    memory: MemoryRow | null;
    heldHere: number;
  }>(Prisma.sql`
    SELECT e."orgId"::text AS "orgId", e."deletedAt",
      e."activeDeploymentId"::text AS "activeDeploymentId",
      e."allowedPaths"::text[] AS "allowedPaths", e."minReplicas", e."maxReplicas", e."gpuCount",
      e."gpuSecondsPerWaitSecond", o."gpuSecondsPerWaitSecond" AS "orgGpuSecondsPerWaitSecond",
      o."warmPoolGpuBudget" AS "orgWarmPoolGpuBudget",
      coalesce((
        SELECT json_agg(json_build_object('id', r.id, 'state', r.state,
                 'deploymentId', r."deploymentId", 'prewarm', r.prewarm,
                 'drainIntent', r."drainIntent", 'nodeId', r."nodeId",
                 'nodeReady', n.state = 'ready') ORDER BY r."updatedAt", r.id)
        FROM "Replica" r LEFT JOIN "Node" n ON n.id = r."nodeId"
        WHERE r."endpointId" = e.id
          AND r.state IN ('pending', 'placed', 'starting', 'ready', 'warm', 'sleeping', 'draining')
      ), '[]'::json) AS replicas,
      (SELECT json_build_object('histogram', w.histogram, 'idleSince', w."idleSince",
                                'bestNonWarmSeconds', w."bestNonWarmSeconds")
       FROM "EndpointWarmPool" w WHERE w."endpointId" = e.id) AS memory,
      (SELECT count(*)::int FROM "GpuReservation" g JOIN "Replica" r ON r.id = g."replicaId"
       WHERE r."endpointId" = e.id AND ${POOLED_REPLICA_SQL}) AS "heldHere"
    FROM "Endpoint" e JOIN "Org" o ON o.id = e."orgId"
    WHERE e.id = ${endpointId}::uuid`);
  // No endpoint, or no memory yet (the locked tending writes its first): not for this path.
  if (!row?.memory) return null;
  // What the org's other pools hold: its whole count, shared by a sweep's tendings (a count
  // per tending was quadratic in the org's endpoints), less this endpoint's own, read now.
  // A count up to a sweep old only certifies that nothing changes; any change is decided
  // again under the lock on an exact count.
  const orgHolds = options.orgPooledGpus
    ? await options.orgPooledGpus.get(row.orgId, () => loadOrgPooledGpus(db, row.orgId))
    : await loadOrgPooledGpus(db, row.orgId);
  const heldElsewhere = Math.max(0, orgHolds - row.heldHere);
  const memory = warmPoolMemoryOf(row.memory);
  const orgIdleTimes = options.orgIdleTimes
    ? await options.orgIdleTimes.load(db, row.orgId, memory.tracker.histogram)
    : await loadOrgIdleTimes(db, row.orgId, endpointId);
  const decision = decideTending({
    endpointId,
    endpoint: row,
    org: {
      gpuSecondsPerWaitSecond: row.orgGpuSecondsPerWaitSecond,
      warmPoolGpuBudget: row.orgWarmPoolGpuBudget,
    },
    replicas: row.replicas,
    readyNodeIds: new Set(row.replicas.flatMap((r) => (r.nodeReady && r.nodeId ? [r.nodeId] : []))),
    memory,
    orgIdleTimes,
    heldElsewhere,
    predicted,
    options,
    settings,
    now,
  });
  if (predicted && predicted.deploymentId !== decision.current)
    options.bestNonWarm?.forget(endpointId);
  if (!decision.changesNothing) return null;
  return {
    plan: { warmReplicas: decision.plan.warmReplicas, reason: decision.plan.reason },
    toPark: [],
    toSleep: [],
    toStop: [],
    toPlace: [],
  };
}

/**
 * Which of `released` sleep, at which level, and which sleepers wake up (are evicted) for
 * them: those of an engine that can sleep, on a node that reports its memory, by planSleep
 * (the engines asleep longest make room first), counted as each is added.
 */
async function sleepersAmong(
  tx: DbTransaction,
  released: { id: string; nodeId: string | null }[],
  deployment: { engine: string; modelBytes: bigint } | null,
): Promise<{ toSleep: TendWarmPoolResult["toSleep"]; evicted: { id: string; nodeId: string }[] }> {
  const none = { toSleep: [], evicted: [] };
  const onNodes = released.filter((r) => r.nodeId !== null);
  if (!deployment || onNodes.length === 0 || !engineSleepCalls(deployment.engine, 1)) return none;
  const nodeIds = [...new Set(onNodes.map((r) => r.nodeId!))];
  // The nodes' placement locks: another endpoint's tending cannot fill the same memory
  // meanwhile, nor a wake take a sleeper being evicted.
  await tx.$queryRaw(lockNodesSql(nodeIds));
  const nodes = await tx.node.findMany({
    where: { id: { in: nodeIds }, state: "ready" },
    select: { id: true, memoryBytes: true, gpuCount: true },
  });
  const asleep = await tx.replica.findMany({
    where: { nodeId: { in: nodeIds }, state: "sleeping" },
    select: { id: true, nodeId: true, sleepingBytes: true },
    orderBy: [{ stateSince: "asc" }, { id: "asc" }],
  });
  const sleepersOn = new Map<string, { id: string; nodeId: string; bytes: number }[]>();
  for (const s of asleep) {
    const list = sleepersOn.get(s.nodeId!) ?? [];
    list.push({ id: s.id, nodeId: s.nodeId!, bytes: Number(s.sleepingBytes ?? 0n) });
    sleepersOn.set(s.nodeId!, list);
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const toSleep: TendWarmPoolResult["toSleep"] = [];
  const evicted: { id: string; nodeId: string }[] = [];
  const newcomers = new Set<string>();
  for (const replica of onNodes) {
    const node = byId.get(replica.nodeId!);
    if (!node) continue;
    const sleepers = sleepersOn.get(node.id) ?? [];
    const plan = planSleep({
      memoryBytes: node.memoryBytes === null ? null : Number(node.memoryBytes),
      gpuCount: node.gpuCount,
      sleepers,
      weightsBytes: Number(deployment.modelBytes),
    });
    const calls = plan && engineSleepCalls(deployment.engine, plan.sleepLevel);
    // Never by evicting one this same tending just put to sleep: that one stops instead.
    if (!plan || !calls || plan.evict.some((s) => newcomers.has(s.id))) continue;
    newcomers.add(replica.id);
    evicted.push(...plan.evict);
    sleepersOn.set(node.id, [
      ...sleepers.filter((s) => !plan.evict.includes(s)),
      { id: replica.id, nodeId: node.id, bytes: plan.bytes },
    ]);
    toSleep.push({
      replicaId: replica.id,
      nodeId: node.id,
      sleepLevel: plan.sleepLevel,
      sleepingBytes: plan.bytes,
      ...calls,
    });
  }
  return { toSleep, evicted };
}

/** The endpoint's miss cost for its active deployment, when its warm pool may hold replicas. */
async function predictBeforeLock(db: DbClient, endpointId: string): Promise<BestNonWarm | null> {
  const row = await db.endpoint.findUnique({
    where: { id: endpointId },
    select: {
      id: true,
      orgId: true,
      gpuType: true,
      gpuCount: true,
      allowedPaths: true,
      objective: true,
      activeDeploymentId: true,
      deletedAt: true,
    },
  });
  if (!row?.activeDeploymentId || row.deletedAt !== null || !row.allowedPaths.includes("warm"))
    return null;
  return {
    deploymentId: row.activeDeploymentId,
    seconds: await predictBestNonWarm(db, row, row.activeDeploymentId),
  };
}

/** What a miss costs now: the predicted seconds of the best feasible start that is not a handover. */
async function predictBestNonWarm(
  db: DbClient,
  row: Parameters<typeof schedulingEndpoint>[0] & { orgId: string },
  deploymentId: string,
): Promise<number | null> {
  const deploymentRow = await db.deployment.findUnique({ where: { id: deploymentId } });
  if (!deploymentRow) return null;
  const endpoint = schedulingEndpoint(row);
  const modelled = schedulingDeployment(deploymentRow);
  const [nodes, { snapshots, history, kernelCaches }] = await Promise.all([
    loadSchedulingNodes(prismaRows(db), row.orgId, endpoint.gpuType, {
      deploymentId,
      imageDigests: [modelled.imageDigest, modelled.estargzDigest].filter(
        (d): d is string => d !== null,
      ),
      gpus: endpoint.gpuCount,
    }),
    loadDeploymentStartInputs(prismaRows(db), row.orgId, modelled),
  ]);
  // A start that fetches the stored kernel cache is what the warm pool competes with.
  const deployment = { ...modelled, kernelCaches };
  const { feasible } = enumerateStartOptions({
    endpoint: { ...endpoint, allowedPaths: endpoint.allowedPaths.filter((p) => p !== "warm") },
    deployment,
    nodes,
    snapshots,
  });
  const predict = optionPredictor(deployment, snapshots, history);
  const nodesById = new Map(nodes.map((n) => [n.id, n]));
  let best: number | null = null;
  for (const option of feasible) {
    const { meanSeconds } = predict(nodesById.get(option.nodeId)!, option);
    if (best === null || meanSeconds < best) best = meanSeconds;
  }
  return best;
}
