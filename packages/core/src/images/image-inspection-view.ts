import { LayerCompression, LayerContent } from "@thaw/protocol";
import { z } from "zod";

// What an image inspection found, as the API answers it (zod only: the wizard's bundle
// imports it through @thaw/core/schemas).

export const InspectedLayerView = z.object({
  digest: z.string(),
  mediaType: z.string(),
  compressedBytes: z.number().int().min(0),
  bytes: z.number().int().min(0).meta({ description: "Uncompressed: what lands on disk." }),
  compression: LayerCompression,
  content: LayerContent,
  estimated: z
    .boolean()
    .meta({ description: "The uncompressed size is the model's ratio, not read from the layer." }),
});

export const ImageInspectionView = z
  .object({
    ref: z.string(),
    registry: z.string(),
    repository: z.string(),
    digest: z.string().meta({ description: "What the reference resolves to (an index's digest)." }),
    platformDigest: z.string().nullable(),
    platform: z.string().nullable(),
    imageBytes: z.number().int().min(0),
    compressedBytes: z.number().int().min(0),
    layers: z.array(InspectedLayerView),
    estargz: z.object({ ref: z.string(), digest: z.string() }).nullable(),
    notes: z.array(z.string()),
  })
  .meta({ id: "ImageInspection" });
export type ImageInspectionView = z.infer<typeof ImageInspectionView>;
