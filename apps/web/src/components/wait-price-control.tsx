"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { MAX_GPU_SECONDS_PER_WAIT_SECOND } from "@thaw/core/schemas";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";

/** The largest price the API takes. */
export const MAX_WAIT_PRICE = MAX_GPU_SECONDS_PER_WAIT_SECOND;

/** A price as typed: a number from 0 to MAX_WAIT_PRICE, or null when it is not one. */
export function parseWaitPrice(text: string): number | null {
  if (text.trim() === "") return null;
  const value = Number(text);
  return Number.isFinite(value) && value >= 0 && value <= MAX_WAIT_PRICE ? value : null;
}

/**
 * Sets the endpoint's own price of waiting, or hands it back to the org's default
 * (endpoints.update with gpuSecondsPerWaitSecond: a number, or null).
 */
export function WaitPriceControl({ slug, own }: { slug: string; own: number | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(own === null ? "" : String(own));
  const update = useMutation(
    trpc.endpoints.update.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.analytics.pathFilter()),
          queryClient.invalidateQueries(trpc.endpoints.pathFilter()),
        ]),
    }),
  );
  const price = parseWaitPrice(value);
  const set = (gpuSecondsPerWaitSecond: number | null) =>
    update.mutate({ endpoint: slug, changes: { gpuSecondsPerWaitSecond } });
  return (
    <form
      className="scale-control"
      aria-label="Price of waiting"
      onSubmit={(event) => {
        event.preventDefault();
        if (price !== null) set(price);
      }}
    >
      <label htmlFor="wait-price">
        GPU-seconds per second of wait <span className="muted">(0–{MAX_WAIT_PRICE})</span>
      </label>
      <input
        id="wait-price"
        data-testid="wait-price-input"
        type="number"
        inputMode="decimal"
        min={0}
        max={MAX_WAIT_PRICE}
        step="any"
        value={value}
        aria-invalid={value.trim() !== "" && price === null}
        onChange={(event) => setValue(event.target.value)}
      />
      <button
        type="submit"
        className="button primary"
        data-testid="wait-price-set"
        disabled={price === null || update.isPending}
      >
        Set price
      </button>
      {own !== null && (
        <button
          type="button"
          className="button"
          data-testid="wait-price-default"
          disabled={update.isPending}
          onClick={() => {
            setValue("");
            set(null);
          }}
        >
          Use the org&apos;s default
        </button>
      )}
      <span aria-live="polite" className="muted small">
        {update.isSuccess && "Saved; the warm pool uses it from its next pass."}
      </span>
      {update.isError && (
        <p className="form-error" role="alert">
          {errorMessage(update.error)}
        </p>
      )}
    </form>
  );
}
