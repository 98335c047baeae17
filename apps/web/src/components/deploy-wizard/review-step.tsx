"use client";

import { CreateEndpointInput, DeploymentSpec } from "@thaw/core/schemas";
import { useFormContext } from "react-hook-form";
import { BYTES_PER_GB, type WizardValues } from "./wizard-form.ts";

const gigabytes = (bytes: number) => `${bytes / BYTES_PER_GB} GB`;

/**
 * Step 5: what will be sent, as core parses it (trimmed, defaults filled in), so the review
 * shows what the endpoint will get. Every earlier step has passed the same schema.
 */
export function ReviewStep({ rolling }: { rolling: boolean }) {
  const { getValues } = useFormContext<WizardValues>();
  const values = getValues();
  const endpoint = rolling ? null : CreateEndpointInput.safeParse(values).data;
  const deployment = DeploymentSpec.safeParse(values.deployment).data;
  const facts: [string, string][] = [
    ...(endpoint
      ? ([
          ["Endpoint", `${endpoint.slug} — ${endpoint.name}`],
          ["GPU", `${endpoint.gpuCount} × ${endpoint.gpuType}`],
          [
            "Replicas",
            `min ${endpoint.minReplicas}, desired ${endpoint.desiredReplicas ?? endpoint.minReplicas}, max ${endpoint.maxReplicas}`,
          ],
          ["Start paths", endpoint.allowedPaths.join(", ")],
          ["Objective", `${endpoint.objective} time-to-ready`],
          [
            "Price of waiting",
            endpoint.gpuSecondsPerWaitSecond == null
              ? "the org's default"
              : `${endpoint.gpuSecondsPerWaitSecond} GPU-s per second of wait`,
          ],
        ] satisfies [string, string][])
      : []),
    ...(deployment
      ? ([
          ["Image", `${deployment.imageRef} (${gigabytes(deployment.imageBytes)})`],
          ["eStargz", deployment.estargzImageRef ?? "none"],
          [
            "Model",
            `${deployment.modelSource} (${gigabytes(deployment.modelBytes)}, ${deployment.modelFormat})`,
          ],
          ["Engine", deployment.engine],
        ] satisfies [string, string][])
      : []),
  ];
  return (
    <dl className="facts" data-testid="deploy-review">
      {facts.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
