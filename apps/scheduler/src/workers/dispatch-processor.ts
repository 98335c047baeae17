import {
  classifyAgentFailure,
  prepareDispatch,
  QUEUES,
  recordDispatched,
  recordDispatchFailed,
  registryAuthForImages,
} from "@thaw/core";
import { RegistryAuth, type StartReplicaRequest } from "@thaw/protocol";
import { AgentApiError } from "@thaw/node-agent-client";
import type { Job } from "bullmq";
import type { WorkerContext } from "./worker-context.ts";

type DispatchOutcome =
  | { kind: "skip"; reason: string }
  | { kind: "dispatched"; nodeId: string; path: string }
  | { kind: "failed"; reason: string }
  /** Unreachable or overloaded agent, attempts left: the job runs again for this one. */
  | { kind: "retry"; error: AgentApiError };

/**
 * dispatch: tell each start's agent to start its replica, the batch's starts in parallel.
 * The agent acknowledges at once (starts are idempotent per replica), phases follow as
 * telemetry. A refusal, or an agent still unreachable on the job's last attempt, closes
 * that attempt and places its replica again with the next-best option. When some agent
 * may yet answer, the job is retried after the others are recorded: the retry skips every
 * start no longer `scheduled`, so only the unanswered ones are sent again.
 */
export async function processDispatch(
  ctx: WorkerContext,
  data: unknown,
  job?: Pick<Job, "attemptsMade" | "opts">,
): Promise<unknown> {
  const { coldStartIds } = QUEUES.dispatch.payload.parse(data);
  const lastAttempt = job ? job.attemptsMade + 1 >= (job.opts.attempts ?? 1) : true;
  const outcomes = await dispatchStarts(ctx, coldStartIds, lastAttempt);
  const retry = outcomes.find((o) => o.kind === "retry");
  if (retry) throw retry.error;
  const count = (kind: DispatchOutcome["kind"]) => outcomes.filter((o) => o.kind === kind).length;
  return { dispatched: count("dispatched"), skipped: count("skip"), failed: count("failed") };
}

/**
 * Sends the starts in parallel; an outcome per start, in order. Anything but an agent's
 * answer (Postgres, a bug) is thrown, as it fails a dispatch job.
 */
export async function dispatchStarts(
  ctx: WorkerContext,
  coldStartIds: readonly string[],
  lastAttempt: boolean,
): Promise<DispatchOutcome[]> {
  const settled = await Promise.allSettled(
    coldStartIds.map((coldStartId) => dispatchOne(ctx, coldStartId, lastAttempt)),
  );
  return settled.map((result) => {
    if (result.status === "rejected") throw result.reason;
    return result.value;
  });
}

async function dispatchOne(
  ctx: WorkerContext,
  coldStartId: string,
  lastAttempt: boolean,
): Promise<DispatchOutcome> {
  const plan = await prepareDispatch({
    db: ctx.db,
    coldStartId,
    ...(ctx.snapshotStore ? { kernelCacheStore: ctx.snapshotStore } : {}),
  });
  if (plan.kind === "skip") return plan;
  if (plan.kind === "fail") return fail(ctx, coldStartId, plan.reason);
  // A request the protocol refuses (say, an image reference the agent would not take) can
  // never be sent, to this node or another: the start fails with that reason at once, its GPU
  // is freed and its replica given up (reconcile decides about a replacement), no retry.
  if (plan.kind === "refuse") {
    ctx.log.warn({ coldStartId, issues: plan.issues }, "start request refused by the protocol");
    return fail(ctx, coldStartId, plan.reason, { retry: false });
  }
  const { request } = plan;
  let registryAuth: StartReplicaRequest["registryAuth"];
  try {
    registryAuth = await registryAuthFor(ctx, plan.orgId, request);
  } catch (error) {
    // A credential that cannot be opened (or an ECR key AWS refuses) would only fail the pull.
    const why = error instanceof Error ? error.message : String(error);
    return fail(ctx, coldStartId, `could not open the org's registry credential: ${why}`);
  }
  try {
    // The credential exists only in this request, in memory: never in the job, never stored.
    await ctx
      .agent({ id: plan.nodeId, agentUrl: plan.agentUrl, certSha256: plan.agentCertSha256 })
      .startReplica(registryAuth?.length ? { ...request, registryAuth } : request);
  } catch (error) {
    if (!(error instanceof AgentApiError)) throw error;
    if (error.retryable && !lastAttempt) return { kind: "retry", error };
    // The tenant reads a class and the protocol's code; the operator's log has the rest.
    ctx.log.warn(
      {
        coldStartId,
        nodeId: plan.nodeId,
        status: error.status,
        code: error.code,
        field: error.field,
        err: error.message,
      },
      "agent did not take the start",
    );
    return fail(ctx, coldStartId, classifyAgentFailure(error, "start"));
  }
  await recordDispatched({ db: ctx.db, coldStartId, replicaId: request.replicaId });
  return { kind: "dispatched", nodeId: plan.nodeId, path: request.path };
}

async function fail(
  ctx: WorkerContext,
  coldStartId: string,
  reason: string,
  options: { retry?: boolean } = {},
) {
  const replicaId = await recordDispatchFailed({ db: ctx.db, coldStartId, reason, ...options });
  ctx.log.warn({ coldStartId, reason, retrying: replicaId !== null }, "dispatch failed");
  if (replicaId) await ctx.enqueue("place", { replicaId });
  return { kind: "failed" as const, reason };
}

/**
 * The org's registry credentials for the images this start pulls (issue 19): the image (the
 * pull path, and the restore path's base image) and its eStargz variant on the lazy path; a
 * warm handover pulls nothing. Opened now, for this request only (an ECR key becomes a token
 * valid 12 hours).
 */
async function registryAuthFor(
  ctx: WorkerContext,
  orgId: string,
  request: StartReplicaRequest,
): Promise<StartReplicaRequest["registryAuth"]> {
  if (!ctx.registryCredentials || request.path === "warm" || request.path === "wake")
    return undefined;
  const { deployment } = request;
  const imageRefs = [deployment.imageRef];
  if (request.path === "lazy" && deployment.estargzImageRef)
    imageRefs.push(deployment.estargzImageRef);
  const auths = await registryAuthForImages({
    db: ctx.db,
    orgId,
    imageRefs,
    sealingKey: ctx.registryCredentials.sealingKey,
    ...(ctx.registryCredentials.ecrEndpoint
      ? { ecrEndpoint: ctx.registryCredentials.ecrEndpoint }
      : {}),
  });
  // A stored credential the protocol would refuse (say, a control character) never leaves here;
  // the agent pulls anonymously and says the registry wanted credentials.
  const sendable = auths.filter((auth) => RegistryAuth.safeParse(auth).success);
  if (sendable.length < auths.length) {
    ctx.log.warn(
      { orgId, registries: auths.filter((a) => !sendable.includes(a)).map((a) => a.registry) },
      "registry credential not sendable to an agent (refused by the protocol)",
    );
  }
  return sendable.length > 0 ? sendable : undefined;
}
