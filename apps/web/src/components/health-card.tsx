"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge } from "./format.ts";
import { errorMessage } from "./query-state.tsx";

export function HealthCard() {
  const trpc = useTRPC();
  const health = useQuery(trpc.system.health.queryOptions(undefined, { refetchInterval: 2_000 }));

  let body;
  if (health.isPending) {
    body = <p className="muted">Checking the control plane…</p>;
  } else if (health.isError) {
    body = (
      <p className="form-error" role="alert">
        Could not load health: {errorMessage(health.error)}
      </p>
    );
  } else {
    const { healthy, instances } = health.data.scheduler;
    const lastSeen = instances.length > 0 ? Math.min(...instances.map((i) => i.ageSeconds)) : null;
    body = (
      <dl className="facts">
        <div>
          <dt>Scheduler</dt>
          <dd>
            <span
              className={`status ${healthy ? "ok" : "down"}`}
              data-testid="scheduler-status"
              data-healthy={healthy}
            >
              {healthy ? "healthy" : "down"}
            </span>
          </dd>
        </div>
        <div>
          <dt>Instances</dt>
          <dd data-testid="scheduler-instances">
            {instances.filter((i) => i.healthy).length} live / {instances.length} seen
          </dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd data-testid="scheduler-last-seen">
            {lastSeen == null ? "never" : `${formatAge(lastSeen)} ago`}
          </dd>
        </div>
      </dl>
    );
  }

  return (
    <section className="card" aria-labelledby="health-title">
      <h2 id="health-title">Control plane</h2>
      {body}
    </section>
  );
}
