import { z } from "zod";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { ImageInspectionView } from "../images/image-inspection-view.ts";
import { ModelArtifact } from "../model-sources/model-artifact.ts";
import type { ArtifactInspector } from "./complete-deployment-spec.ts";
import { ImageRef, ModelSource } from "./deployment-spec.ts";

// What a deployment of this image and model would be made from, before it is made: the
// deploy wizard's inspection step, and `POST /api/v1/inspections` for scripts that want to
// see it first. Nothing is stored. Asking registries on an org's behalf is a deployment
// writer's right, so a viewer's key cannot make Thaw fetch.

export const InspectArtifactsRequest = z
  .object({ imageRef: ImageRef, modelSource: ModelSource.optional() })
  .strict()
  .meta({ id: "InspectArtifacts" });

export const ArtifactsInspectionView = z
  .object({
    image: ImageInspectionView,
    model: ModelArtifact.nullable().meta({ description: "null when no modelSource was given." }),
  })
  .meta({ id: "ArtifactsInspection" });
export type ArtifactsInspectionView = z.infer<typeof ArtifactsInspectionView>;

export async function inspectArtifacts({
  actor,
  input,
  inspector,
  where = "input",
}: {
  actor: Actor;
  input: unknown;
  inspector: ArtifactInspector | undefined;
  where?: string;
}): Promise<ArtifactsInspectionView> {
  assertCan(actor, "deployments:write");
  const request = parseInput(InspectArtifactsRequest, input, where);
  if (!inspector) throw new AppError("UNAVAILABLE", "Inspection is not available here.");
  const [image, model] = await Promise.all([
    inspector.inspectImage({
      ref: request.imageRef,
      field: `${where}.imageRef`,
      orgId: actor.orgId,
    }),
    request.modelSource
      ? inspector.sizeModelSource({
          source: request.modelSource,
          field: `${where}.modelSource`,
          orgId: actor.orgId,
        })
      : null,
  ]);
  return { image, model };
}
