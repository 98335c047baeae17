"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";

/** Sets an endpoint's desired replicas within its bounds (scaling.setReplicas). */
export function ScaleControl({
  slug,
  desired,
  min,
  max,
}: {
  slug: string;
  desired: number;
  min: number;
  max: number;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(String(desired));
  const scale = useMutation(
    trpc.scaling.setReplicas.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.analytics.pathFilter()),
          queryClient.invalidateQueries(trpc.endpoints.pathFilter()),
        ]),
    }),
  );
  const replicas = Number(value);
  const valid =
    value.trim() !== "" && Number.isInteger(replicas) && replicas >= min && replicas <= max;
  return (
    <form
      className="scale-control"
      aria-label="Scale this endpoint"
      onSubmit={(event) => {
        event.preventDefault();
        if (valid) scale.mutate({ endpoint: slug, replicas });
      }}
    >
      <label htmlFor="scale-replicas">
        Desired replicas{" "}
        <span className="muted">
          ({min}–{max})
        </span>
      </label>
      <input
        id="scale-replicas"
        data-testid="scale-replicas"
        type="number"
        inputMode="numeric"
        min={min}
        max={max}
        step={1}
        value={value}
        aria-invalid={!valid}
        onChange={(event) => setValue(event.target.value)}
      />
      <button type="submit" className="button primary" disabled={!valid || scale.isPending}>
        {scale.isPending ? "Scaling…" : "Scale"}
      </button>
      <span aria-live="polite" className="muted small">
        {scale.isSuccess &&
          `Desired ${scale.data.previousReplicas} → ${scale.data.desiredReplicas}; the scheduler reconciles.`}
      </span>
      {scale.isError && (
        <p className="form-error" role="alert">
          {errorMessage(scale.error)}
        </p>
      )}
    </form>
  );
}
