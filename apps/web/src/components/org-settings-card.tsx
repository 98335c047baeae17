"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { MAX_WARM_POOL_GPU_BUDGET } from "@thaw/core/schemas";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";
import { MAX_WAIT_PRICE, parseWaitPrice } from "./wait-price-control.tsx";

/** The largest warm-pool budget the API takes. */
const MAX_GPU_BUDGET = MAX_WARM_POOL_GPU_BUDGET;

const wholeGpus = (text: string): number | null =>
  /^\d+$/.test(text.trim()) && Number(text) <= MAX_GPU_BUDGET ? Number(text) : null;

/**
 * The org's objective for its warm pools (admins and owners): the price of waiting its
 * endpoints follow unless they set their own, and the GPUs its warm pools may hold idle.
 * An empty field is the default above the org.
 */
export function OrgSettingsCard() {
  const trpc = useTRPC();
  const settings = useQuery(trpc.org.settings.queryOptions());
  return (
    <section className="card" aria-labelledby="org-settings-title" data-testid="org-settings">
      <div className="card-head">
        <h2 id="org-settings-title">Warm pool objective</h2>
      </div>
      {settings.data ? (
        <OrgSettingsForm
          key={`${settings.data.gpuSecondsPerWaitSecond}-${settings.data.warmPoolGpuBudget}`}
          price={settings.data.gpuSecondsPerWaitSecond}
          platformPrice={settings.data.effectiveGpuSecondsPerWaitSecond}
          budget={settings.data.warmPoolGpuBudget}
        />
      ) : settings.isError ? (
        <p className="form-error" role="alert">
          {errorMessage(settings.error)}
        </p>
      ) : (
        <p className="muted">Loading settings…</p>
      )}
    </section>
  );
}

function OrgSettingsForm({
  price,
  platformPrice,
  budget,
}: {
  price: number | null;
  platformPrice: { value: number | null; source: "org" | "platform" };
  budget: number | null;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [priceText, setPriceText] = useState(price === null ? "" : String(price));
  const [budgetText, setBudgetText] = useState(budget === null ? "" : String(budget));
  const save = useMutation(
    trpc.org.setSettings.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.org.pathFilter()),
          queryClient.invalidateQueries(trpc.analytics.pathFilter()),
        ]),
    }),
  );
  const priceBad = priceText.trim() !== "" && parseWaitPrice(priceText) === null;
  const budgetBad = budgetText.trim() !== "" && wholeGpus(budgetText) === null;
  return (
    <form
      className="form"
      aria-label="Warm pool objective"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        if (priceBad || budgetBad) return;
        save.mutate({
          gpuSecondsPerWaitSecond: priceText.trim() === "" ? null : parseWaitPrice(priceText),
          warmPoolGpuBudget: budgetText.trim() === "" ? null : wholeGpus(budgetText),
        });
      }}
    >
      <label htmlFor="org-wait-price">
        Default price of waiting (GPU-seconds per second of wait, 0–{MAX_WAIT_PRICE})
      </label>
      <input
        id="org-wait-price"
        data-testid="org-wait-price"
        type="number"
        inputMode="decimal"
        min={0}
        max={MAX_WAIT_PRICE}
        step="any"
        placeholder={
          platformPrice.source === "platform" ? "none: a 10-minute keep-alive's idle time" : ""
        }
        value={priceText}
        aria-invalid={priceBad}
        aria-describedby="org-wait-price-hint"
        onChange={(event) => setPriceText(event.target.value)}
      />
      <span id="org-wait-price-hint" className="muted small">
        Idle GPU time the warm pool may spend to save a request one second of wait, for endpoints
        that set no price of their own; 0 keeps nothing warm beyond minReplicas. Empty: the
        platform&apos;s default.
      </span>
      <label htmlFor="org-gpu-budget">Warm-pool GPU budget (GPUs, 0–{MAX_GPU_BUDGET})</label>
      <input
        id="org-gpu-budget"
        data-testid="org-gpu-budget"
        type="number"
        inputMode="numeric"
        min={0}
        max={MAX_GPU_BUDGET}
        step={1}
        placeholder="the operator's default"
        value={budgetText}
        aria-invalid={budgetBad}
        aria-describedby="org-gpu-budget-hint"
        onChange={(event) => setBudgetText(event.target.value)}
      />
      <span id="org-gpu-budget-hint" className="muted small">
        GPUs the org&apos;s warm pools may hold idle beyond what minReplicas forces, whatever the
        price. Empty: the operator&apos;s default (THAW_WARM_POOL_GPU_BUDGET).
      </span>
      <button
        type="submit"
        className="button primary"
        data-testid="org-settings-save"
        disabled={priceBad || budgetBad || save.isPending}
      >
        {save.isPending ? "Saving…" : "Save"}
      </button>
      <span aria-live="polite" className="muted small">
        {save.isSuccess && "Saved; the warm pool uses it from its next pass."}
      </span>
      {save.isError && (
        <p className="form-error" role="alert">
          {errorMessage(save.error)}
        </p>
      )}
    </form>
  );
}
