import type { ModelFormat } from "./model-artifact.ts";

// Which files of a repo or prefix are the model's weights, and in what format, from the
// names alone (pure: the sizers fetch, this decides). A repo often holds one model in several
// forms (safetensors and pytorch_model.bin, an onnx/ export, the original/ checkpoint), so one
// format is chosen in the order engines prefer them, and within it the files nearest the
// root (Llama's original/consolidated.00.pth is not what vLLM loads).

interface FormatRule {
  format: ModelFormat;
  isWeight: (name: string) => boolean;
  /** An index that maps tensors to shard files (transformers' sharded checkpoints). */
  isIndex?: (name: string) => boolean;
}

const FORMAT_RULES: readonly FormatRule[] = [
  {
    format: "safetensors",
    isWeight: (name) => name.endsWith(".safetensors"),
    isIndex: (name) => name.endsWith(".safetensors.index.json"),
  },
  { format: "gguf", isWeight: (name) => name.endsWith(".gguf") },
  {
    format: "pytorch",
    // Any other *.bin (training_args.bin, optimizer states) is not weights.
    isWeight: (name) => /^pytorch_model.*\.bin$/.test(name) || /\.(pt|pth)$/.test(name),
    isIndex: (name) => /^pytorch_model.*\.bin\.index\.json$/.test(name),
  },
  // ONNX keeps large tensors in external data files beside the graph.
  { format: "onnx", isWeight: (name) => /\.onnx(_data|\.data)?$/.test(name) },
  { format: "tensorflow", isWeight: (name) => /^tf_model.*\.h5$/.test(name) },
  { format: "flax", isWeight: (name) => /^flax_model.*\.msgpack$/.test(name) },
];

/** llama.cpp's split GGUF: `<base>-00001-of-00003.gguf`, loaded from its first part. */
const GGUF_SPLIT = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/;

export type ModelFormatDetection =
  | {
      kind: "weights";
      format: ModelFormat;
      sharded: boolean;
      /** Paths as given, in the order given. */
      weightFiles: string[];
      /** The shard index, when there is one: its weight map names the shards exactly. */
      indexFile: string | null;
    }
  /** Several models of one format where one is needed; `choices` names one file of each. */
  | { kind: "ambiguous"; format: ModelFormat; choices: string[] }
  | { kind: "none" };

const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);
const depth = (path: string) => path.split("/").length - 1;

/**
 * The format of one file the user named, by its name; "unknown" when no rule knows it. A
 * named *.bin is taken as a PyTorch checkpoint: naming it says it is the weights.
 */
export function formatOfFile(path: string): ModelFormat {
  const name = baseName(path).toLowerCase();
  if (name.endsWith(".bin")) return "pytorch";
  return FORMAT_RULES.find((rule) => rule.isWeight(name))?.format ?? "unknown";
}

/** The weights among a repo's or prefix's files (paths relative to its root). */
export function detectModelFormat(paths: readonly string[]): ModelFormatDetection {
  for (const rule of FORMAT_RULES) {
    const matching = paths.filter((path) => rule.isWeight(baseName(path).toLowerCase()));
    if (matching.length === 0) continue;
    const top = Math.min(...matching.map(depth));
    const weightFiles = matching.filter((path) => depth(path) === top);
    if (rule.format === "gguf") return detectGguf(weightFiles);
    const indexFile =
      paths.find((path) => depth(path) === top && rule.isIndex?.(baseName(path).toLowerCase())) ??
      null;
    return {
      kind: "weights",
      format: rule.format,
      sharded: indexFile !== null || weightFiles.length > 1,
      weightFiles,
      indexFile,
    };
  }
  return { kind: "none" };
}

/**
 * A GGUF repo is usually one model in many quantisations, each a file (or a split set) that
 * serves on its own: summing them would size a model nobody runs, so more than one is
 * ambiguous and the user names the file.
 */
function detectGguf(files: string[]): ModelFormatDetection {
  const models = new Map<string, string[]>();
  for (const file of files) {
    const key = GGUF_SPLIT.exec(file)?.[1] ?? file;
    models.set(key, [...(models.get(key) ?? []), file]);
  }
  if (models.size > 1)
    return {
      kind: "ambiguous",
      format: "gguf",
      choices: [...models.values()].map((group) => group.toSorted()[0]!),
    };
  const weightFiles = [...models.values()][0]!;
  return {
    kind: "weights",
    format: "gguf",
    sharded: weightFiles.length > 1,
    weightFiles,
    indexFile: null,
  };
}

/**
 * The files a named file stands for: a split GGUF part brings its whole set (llama.cpp opens
 * the first part and reads the others beside it, so a host needs them all).
 */
export function filesOfNamedFile(path: string, paths: readonly string[]): string[] {
  const split = GGUF_SPLIT.exec(path);
  if (!split) return [path];
  const [, base, , count] = split;
  return paths.filter((other) => {
    const match = GGUF_SPLIT.exec(other);
    return match !== null && match[1] === base && match[3] === count;
  });
}

/**
 * The shard files a transformers index names (its weight_map's values, relative to the
 * index's own folder), or null when the index is not one.
 */
export function shardsOfIndex(index: unknown, indexPath: string): string[] | null {
  const weightMap = (index as { weight_map?: unknown } | null)?.weight_map;
  if (typeof weightMap !== "object" || weightMap === null) return null;
  const folder = indexPath.slice(0, indexPath.lastIndexOf("/") + 1);
  const shards = new Set<string>();
  for (const file of Object.values(weightMap)) {
    if (typeof file !== "string" || file === "") return null;
    shards.add(folder + file);
  }
  return shards.size > 0 ? [...shards] : null;
}
