import type { ScenarioLayer } from "@thaw/protocol";
import { AppError } from "../errors/index.ts";
import type { ImageInspection } from "../images/inspect-image.ts";
import type { ModelArtifact } from "../model-sources/model-artifact.ts";
import { deriveImageLayers, type DeploymentSpec } from "./deployment-spec.ts";
import { digestOfRef } from "./digest-of-ref.ts";

// A deployment as the client gave it (an image reference and a model source, sizes and
// digests optional) made whole from what the registry and the model's host say (issue 19).
// What the client gave is an override and wins; what it left out is found, never guessed.
// Runs before the write's transaction: inspection is network I/O with its own time bound.

/** What finds an org's artifacts: the web app's, built from the operator's env. */
export interface ArtifactInspector {
  inspectImage(o: { ref: string; field: string; orgId: string }): Promise<ImageInspection>;
  sizeModelSource(o: { source: string; field: string; orgId: string }): Promise<ModelArtifact>;
}

/** A spec with every stored field known. */
export type CompleteDeploymentSpec = DeploymentSpec & {
  imageDigest: string;
  imageBytes: number;
  imageLayers: ScenarioLayer[];
  modelBytes: number;
  modelFormat: string;
};

export async function completeDeploymentSpec(
  spec: DeploymentSpec,
  o: { inspector: ArtifactInspector | undefined; orgId: string; where: string },
): Promise<CompleteDeploymentSpec> {
  const needsImage = spec.imageBytes === undefined && spec.imageLayers === undefined;
  // The format is the source's to say too: a size given alone still asks the source for it.
  const needsModel = spec.modelBytes === undefined || spec.modelFormat === undefined;
  const inspector = o.inspector;
  const unavailable = (field: string) =>
    new AppError(
      "BAD_REQUEST",
      `${o.where}.${field}: required here (this caller does not inspect registries or model sources)`,
      { field: `${o.where}.${field}` },
    );
  if ((needsImage || needsModel) && !inspector)
    throw unavailable(
      needsImage ? "imageBytes" : spec.modelBytes === undefined ? "modelBytes" : "modelFormat",
    );
  const [image, model] = await Promise.all([
    needsImage
      ? inspector!.inspectImage({
          ref: spec.imageRef,
          field: `${o.where}.imageRef`,
          orgId: o.orgId,
        })
      : null,
    needsModel
      ? inspector!.sizeModelSource({
          source: spec.modelSource,
          field: `${o.where}.modelSource`,
          orgId: o.orgId,
        })
      : null,
  ]);
  const layers =
    spec.imageLayers ??
    image?.layers.map(({ bytes, compression, content }) => ({ bytes, compression, content })) ??
    deriveImageLayers(spec.imageBytes!);
  const imageBytes = spec.imageBytes ?? layers.reduce((sum, l) => sum + l.bytes, 0);
  // The variant found goes with its digest; one the client named keeps the client's.
  const estargz =
    spec.estargzImageRef !== undefined
      ? {
          estargzImageRef: spec.estargzImageRef,
          estargzDigest: spec.estargzDigest ?? digestOfRef(spec.estargzImageRef),
        }
      : image?.estargz
        ? { estargzImageRef: image.estargz.ref, estargzDigest: image.estargz.digest }
        : {};
  const modelFormat = spec.modelFormat ?? model!.format;
  return {
    ...spec,
    ...estargz,
    imageDigest: spec.imageDigest ?? image?.digest ?? digestOfRef(spec.imageRef),
    imageBytes,
    imageLayers: layers,
    modelBytes: spec.modelBytes ?? model!.totalBytes,
    modelFormat,
  };
}
