import { z } from "zod";

// What sizing a model source found: the bytes a host will download and hold, the format the
// engine will load, and the files, so a client never has to type "model size (GB)". zod only
// (no Node API), so a browser bundle may import this module on its own.

/** A format name: lowercase, short, safe to store and show ("safetensors", "gguf", ...). */
export const MODEL_FORMAT = /^[a-z0-9][a-z0-9._-]{0,31}$/;

/** Formats the detector names; a source it cannot place is "unknown". */
export const MODEL_FORMATS = [
  "safetensors",
  "gguf",
  "pytorch",
  "onnx",
  "tensorflow",
  "flax",
  "unknown",
] as const;
export type ModelFormat = (typeof MODEL_FORMATS)[number];

/** At most this many files are listed; fileCount says how many there were. */
export const MAX_LISTED_FILES = 1_000;

export const ModelArtifactFile = z.object({
  /** Relative to the source: a repo's file name, a key below the prefix, a URL's last segment. */
  path: z.string().min(1),
  bytes: z.number().int().min(0),
});
export type ModelArtifactFile = z.infer<typeof ModelArtifactFile>;

export const ModelArtifact = z.object({
  source: z.string(),
  /** Bytes of the weights a host downloads: every listed file's, unlisted ones included. */
  totalBytes: z.number().int().min(1),
  format: z.string().regex(MODEL_FORMAT),
  /** The weights span more than one file (an index, or a -00001-of-0000N split). */
  sharded: z.boolean(),
  files: z.array(ModelArtifactFile).max(MAX_LISTED_FILES),
  /** How many files the weights are, listed or not. */
  fileCount: z.number().int().min(1),
  /** What pins this answer: a Hub commit, an S3 object's version. */
  revision: z.string().optional(),
});
export type ModelArtifact = z.infer<typeof ModelArtifact>;

/** The listed files (capped) and the count of all of them. */
export function listFiles(files: readonly ModelArtifactFile[]): {
  files: ModelArtifactFile[];
  fileCount: number;
  totalBytes: number;
} {
  return {
    files: files.slice(0, MAX_LISTED_FILES),
    fileCount: files.length,
    totalBytes: files.reduce((sum, file) => sum + file.bytes, 0),
  };
}
