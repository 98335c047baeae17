import {
  adoptInstances,
  beginHostLaunch,
  beginHostRetirement,
  loadFleetSnapshot,
  loadGarbageNodes,
  markHostLaunchBlocked,
  markHostsTerminated,
  offeringKey,
  planFleetChange,
  planFleetGarbage,
  QUEUES,
  recordCapacityFallback,
  recordHostLaunch,
  recordSpendCapState,
} from "@thaw/core";
import { NoCapacityError } from "../fleet/host-provider.ts";
import type { FleetRuntime, WorkerContext } from "./worker-context.ts";

/** A join token outlives the slowest boot the policy allows. */
const tokenTtl = (fleet: FleetRuntime) => fleet.policy.launchGraceSeconds + 300;

/**
 * fleet: grow one org's hosts when replicas wait with no node to take them, retire idle
 * ones after the cool-down (planFleetChange decides), or — `gc` — reconcile the provider's
 * instances with the node rows (planFleetGarbage decides). Launches are recorded before
 * the provider is called, so a crash between the two leaves a row the collector resolves.
 */
export async function processFleet(ctx: WorkerContext, data: unknown): Promise<unknown> {
  const payload = QUEUES.fleet.payload.parse(data);
  const fleet = ctx.fleet;
  if (!fleet) return { skipped: "no fleet provider configured (THAW_FLEET_CONFIG)" };
  if (!("orgId" in payload)) return collectGarbage(ctx, fleet);

  const { orgId } = payload;
  const { policy, provider } = fleet;
  const nowSeconds = Date.now() / 1000;
  const snapshot = await loadFleetSnapshot({
    db: ctx.db,
    orgId,
    provider: provider.kind,
    pendingGraceSeconds: policy.pendingGraceSeconds,
  });
  const plan = planFleetChange({
    nowSeconds,
    offerings: policy.offerings,
    unavailableUntil: await fleet.availability.unavailableUntil(policy.offerings),
    hosts: snapshot.hosts,
    pending: snapshot.pending,
    spendCapUsdPerHour: snapshot.spendCapUsdPerHour ?? policy.defaultSpendCapUsdPerHour,
    idleCooldownSeconds: policy.idleCooldownSeconds,
    maxLaunches: policy.maxLaunchesPerDecision,
  });

  const launched: string[] = [];
  for (const { offering, reason } of plan.launch) {
    const { nodeId, joinToken } = await beginHostLaunch({
      db: ctx.db,
      orgId,
      provider: provider.kind,
      offering,
      tokenTtlSeconds: tokenTtl(fleet),
      reason,
    });
    // The planner's pick first, then the other offerings of the same GPU as fallbacks.
    const fallbacks = policy.offerings.filter(
      (o) => o.gpuModel === offering.gpuModel && offeringKey(o) !== offeringKey(offering),
    );
    try {
      const result = await provider.launch({
        nodeId,
        orgId,
        offerings: [offering, ...fallbacks],
        joinToken,
      });
      for (const { offering: refused } of result.unavailable)
        await fleet.availability.markUnavailable(refused, policy.unavailableTtlSeconds, nowSeconds);
      await recordHostLaunch({
        db: ctx.db,
        nodeId,
        outcome: {
          kind: "launched",
          instanceId: result.instanceId,
          instanceType: result.offering.instanceType,
          zone: result.offering.zone,
          priceUsdPerHour: result.offering.priceUsdPerHour,
          volume: result.volume,
        },
      });
      launched.push(result.instanceId);
      // The planner's pick had no capacity and a fallback was launched: the org hears of it.
      if (offeringKey(result.offering) !== offeringKey(offering)) {
        const deliveryIds = await recordCapacityFallback({
          db: ctx.db,
          orgId,
          nodeId,
          requested: offering,
          launched: result.offering,
          unavailable: result.unavailable,
        });
        await ctx.enqueueMany(
          "webhookDelivery",
          deliveryIds.map((deliveryId) => ({ deliveryId })),
        );
      }
      ctx.log.info(
        {
          orgId,
          nodeId,
          instanceId: result.instanceId,
          offering: offeringKey(result.offering),
          reason,
        },
        "host launched",
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof NoCapacityError) {
        for (const { offering: refused } of error.unavailable)
          await fleet.availability.markUnavailable(
            refused,
            policy.unavailableTtlSeconds,
            nowSeconds,
          );
      }
      // The row is closed with the reason; an instance that did start anyway (an answer lost
      // after EC2 acted) carries this node's tag and is terminated by the collector.
      await recordHostLaunch({
        db: ctx.db,
        nodeId,
        outcome: { kind: "failed", reason: `launch failed: ${message}` },
      });
      ctx.log.warn({ orgId, nodeId, err: message }, "host launch failed");
      if (!(error instanceof NoCapacityError)) throw error;
    }
  }

  const retired: string[] = [];
  for (const { nodeId, reason } of plan.retire) {
    const retiring = await beginHostRetirement({ db: ctx.db, nodeId, reason });
    if (!retiring) continue;
    if (retiring.instanceId) await provider.terminate([retiring.instanceId]);
    await markHostsTerminated({ db: ctx.db, hosts: [{ nodeId, reason: `retired: ${reason}` }] });
    retired.push(nodeId);
    ctx.log.info({ orgId, nodeId, reason }, "host retired");
  }

  for (const { gpuModel, reason } of plan.blocked) {
    await markHostLaunchBlocked({ db: ctx.db, orgId, gpuModel, blockedBy: reason });
    ctx.log.warn({ orgId, gpuModel, reason }, "fleet growth blocked");
  }
  // The spend cap's episode: spend_cap.reached once when a run first holds back at it.
  const capDeliveries = await recordSpendCapState({
    db: ctx.db,
    orgId,
    capUsdPerHour: snapshot.spendCapUsdPerHour ?? policy.defaultSpendCapUsdPerHour,
    heldBack: plan.blocked.filter((b) => b.cause === "spend_cap"),
  });
  await ctx.enqueueMany(
    "webhookDelivery",
    capDeliveries.map((deliveryId) => ({ deliveryId })),
  );
  return { launched, retired, blocked: plan.blocked };
}

async function collectGarbage(ctx: WorkerContext, fleet: FleetRuntime) {
  const instances = await fleet.provider.listInstances();
  const nodes = await loadGarbageNodes({
    db: ctx.db,
    provider: fleet.provider.kind,
    instanceNodeIds: instances.flatMap((i) => (i.nodeId ? [i.nodeId] : [])),
  });
  const plan = planFleetGarbage({
    nowSeconds: Date.now() / 1000,
    instances,
    nodes,
    launchGraceSeconds: fleet.policy.launchGraceSeconds,
  });
  await adoptInstances({ db: ctx.db, adopt: plan.adopt });
  if (plan.terminate.length > 0) {
    await fleet.provider.terminate(plan.terminate.map((t) => t.instanceId));
    ctx.log.warn({ terminated: plan.terminate }, "fleet garbage collector terminated instances");
  }
  await markHostsTerminated({ db: ctx.db, hosts: plan.markTerminated });
  if (plan.markTerminated.length > 0)
    ctx.log.warn({ nodes: plan.markTerminated }, "fleet garbage collector closed node rows");
  return plan;
}
