import type { Physics } from "./physical-constants";
import type { ScenarioEngine, ScenarioImage, ScenarioLayer } from "./scenario-schema";

// What a start moves for each layer: bytes over the wire (compressed), bytes to disk
// (uncompressed), the one-core decompression rate, and the bytes the engine will read.

export interface LayerPlan extends ScenarioLayer {
  index: number;
  compressedBytes: number;
  decompressBytesPerSecondPerCore: number;
  /** Bytes of this layer read before ready: the prefetch target of an eStargz layer. */
  readBytes: number;
}

export interface ImagePlan {
  layers: LayerPlan[];
  /** The weights ship in the image (a `weights` layer); otherwise they sit on local disk. */
  weightsInImage: boolean;
  /** Weights the loader reads from the image's weights layers. */
  weightsReadBytes: number;
  /** Everything else read before ready: imports walking the Python stack, tokenizer, config. */
  codeReadBytes: number;
  weightsLayerIndexes: number[];
  otherLayerIndexes: number[];
}

export function planImage(
  image: ScenarioImage,
  engine: ScenarioEngine,
  physics: Physics,
): ImagePlan {
  const layers = image.layers.map((layer, index) => ({
    ...layer,
    index,
    compressedBytes: layer.bytes * physics.compressedFraction[layer.compression][layer.content],
    decompressBytesPerSecondPerCore:
      physics.decompressBytesPerSecondPerCore[layer.compression][layer.content],
    readBytes: 0,
  }));
  const weightsLayers = layers.filter((layer) => layer.content === "weights");
  const otherLayers = layers.filter((layer) => layer.content !== "weights");
  const sum = (list: LayerPlan[]) => list.reduce((total, layer) => total + layer.bytes, 0);
  const totalRead = image.readFraction * sum(layers);
  const weightsInImage = weightsLayers.length > 0 && engine.weightsBytes > 0;

  const weightsReadBytes = weightsInImage ? Math.min(engine.weightsBytes, sum(weightsLayers)) : 0;
  // readFraction covers the whole image: what the weights loader does not read, the imports do.
  const codeSources = weightsInImage ? otherLayers : layers;
  const codeReadBytes = Math.min(Math.max(0, totalRead - weightsReadBytes), sum(codeSources));

  spreadReads(weightsInImage ? weightsLayers : [], weightsReadBytes);
  spreadReads(codeSources, codeReadBytes);
  return {
    layers,
    weightsInImage,
    weightsReadBytes,
    codeReadBytes,
    weightsLayerIndexes: weightsInImage ? weightsLayers.map((layer) => layer.index) : [],
    otherLayerIndexes: (weightsInImage ? otherLayers : layers).map((layer) => layer.index),
  };
}

/** Reads spread over layers in proportion to their size (adds to what is already there). */
function spreadReads(layers: LayerPlan[], bytes: number): void {
  const total = layers.reduce((sum, layer) => sum + layer.bytes, 0);
  if (total <= 0) return;
  for (const layer of layers) layer.readBytes += (bytes * layer.bytes) / total;
}
