"use client";

import { CreateEndpointInput, DeploymentSpec } from "@thaw/core/schemas";
import { useFormContext } from "react-hook-form";
import type { ArtifactsInspection } from "./use-artifacts-inspection.ts";
import { formatBytes } from "../format.ts";
import type { WizardValues } from "./wizard-form.ts";

const gigabytes = formatBytes;

/**
 * The last step: what will be sent, as core parses it (trimmed, defaults filled in), and what
 * the registry and the model source said of what was left out, so the user sees the sizes,
 * digest and variant the deployment will get before deploying.
 */
export function ReviewStep({
  rolling,
  inspection,
}: {
  rolling: boolean;
  inspection: ArtifactsInspection;
}) {
  const { getValues } = useFormContext<WizardValues>();
  const values = getValues();
  const endpoint = rolling ? null : CreateEndpointInput.safeParse(values).data;
  const deployment = DeploymentSpec.safeParse(values.deployment).data;
  const image = inspection.data?.image;
  const model = inspection.data?.model;
  const imageBytes = deployment?.imageBytes ?? image?.imageBytes;
  const modelBytes = deployment?.modelBytes ?? model?.totalBytes;
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
          [
            "Image",
            `${deployment.imageRef}${imageBytes === undefined ? "" : ` (${gigabytes(imageBytes)})`}`,
          ],
          [
            "eStargz",
            deployment.estargzImageRef ?? image?.estargz?.ref ?? (image ? "none found" : "none"),
          ],
          [
            "Model",
            `${deployment.modelSource}${modelBytes === undefined ? "" : ` (${gigabytes(modelBytes)}, ${deployment.modelFormat ?? model?.format ?? "?"})`}`,
          ],
          ["Engine", deployment.engine],
        ] satisfies [string, string][])
      : []),
  ];
  return (
    <>
      <dl className="facts" data-testid="deploy-review">
        {facts.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <InspectionFindings inspection={inspection} />
    </>
  );
}

function InspectionFindings({ inspection }: { inspection: ArtifactsInspection }) {
  if (!inspection.needed) return null;
  if (inspection.pending)
    return (
      <p className="muted" role="status" data-testid="deploy-inspection-pending">
        Asking the registry and the model source…
      </p>
    );
  const found = inspection.data;
  if (!found) return null;
  const { image, model } = found;
  const byCompression = Object.entries(
    image.layers.reduce<Record<string, number>>((counts, layer) => {
      counts[layer.compression] = (counts[layer.compression] ?? 0) + 1;
      return counts;
    }, {}),
  )
    .map(([compression, count]) => `${count} ${compression}`)
    .join(", ");
  const rows: [string, string][] = [
    ["Digest", image.digest],
    ...(image.platform
      ? ([["Platform", `${image.platform} (${image.platformDigest})`]] satisfies [string, string][])
      : []),
    [
      "Layers",
      `${image.layers.length} (${byCompression}): ${gigabytes(image.imageBytes)} on disk, ${gigabytes(image.compressedBytes)} to download`,
    ],
    ["eStargz variant", image.estargz ? `${image.estargz.ref} (${image.estargz.digest})` : "none"],
    ...(model
      ? ([
          [
            "Model files",
            `${model.fileCount} ${model.format}${model.sharded ? " shards" : ""}, ${gigabytes(model.totalBytes)}${model.revision ? ` at ${model.revision}` : ""}`,
          ],
        ] satisfies [string, string][])
      : []),
  ];
  return (
    <section
      className="inspection"
      aria-label="Found in the registry"
      data-testid="deploy-inspection"
    >
      <h4>Found in the registry{model ? " and the model source" : ""}</h4>
      <dl className="facts">
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {image.notes.map((note) => (
        <p key={note} className="muted small">
          {note}
        </p>
      ))}
    </section>
  );
}
