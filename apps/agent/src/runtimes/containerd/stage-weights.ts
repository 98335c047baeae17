import { mkdir, mkdtemp, open, readdir, rmdir, stat } from "node:fs/promises";
import path from "node:path";
import { WEIGHT_STAGING_READERS } from "@thaw/core/cold-start-model";
import { type ContainerdHost } from "./host.ts";

/**
 * Weights restored apart from the process image (issue 20's third part; NVIDIA Dynamo Snapshot
 * restores the weights apart from CRIU's image): a sleep-level-2 checkpoint holds the engine
 * without its weights, and the engine's reload after the wake reads them with one reader,
 * tensor by tensor. While CRIU restores the process, the agent reads the image's weight files
 * into the page cache with several readers, so that reload copies from memory. The image is
 * mounted read-only (`ctr images mount`): its files are the lower layers the container's
 * overlay reads, so the pages cached here are the ones the engine finds.
 *
 * An accelerator only: a failure is reported and the reload reads the disk as it did before.
 */

/** Files an engine loads weights from: safetensors, PyTorch pickles, GGUF. */
export const WEIGHT_FILE = /\.(safetensors|bin|pt|pth|gguf|ckpt)$/i;
const CHUNK_BYTES = 8 * 1024 * 1024;

export interface StagedWeights {
  files: number;
  bytes: number;
  seconds: number;
}

export async function stageImageWeights(
  host: ContainerdHost,
  imageRef: string,
  options: {
    stagingDir: string;
    readers?: number;
    /** Which file names are weights (default WEIGHT_FILE). */
    files?: RegExp;
    signal?: AbortSignal;
  },
): Promise<StagedWeights> {
  const started = performance.now();
  const { signal } = options;
  await mkdir(options.stagingDir, { recursive: true, mode: 0o700 });
  const target = await mkdtemp(path.join(options.stagingDir, "weights-"));
  try {
    await host.run(host.ctr.imageMount(imageRef, target), "mount the image to stage its weights", {
      ...(signal ? { signal } : {}),
    });
    try {
      const files = await weightFiles(target, options.files ?? WEIGHT_FILE, signal);
      // The readers the model prices (libuv runs 4 file reads at a time unless
      // UV_THREADPOOL_SIZE is raised).
      const bytes = await readInto(files, options.readers ?? WEIGHT_STAGING_READERS, signal);
      return { files: files.length, bytes, seconds: (performance.now() - started) / 1000 };
    } finally {
      // `--rm` removes the view snapshot the mount made; never abandoned to a signal.
      await host.run(host.ctr.imageUnmount(target), "unmount the staged image");
    }
  } finally {
    // Non-recursive on purpose: a directory still mounted is left, never emptied.
    await rmdir(target).catch(() => undefined);
  }
}

/** Regular files named like weights under `root`, largest first (symlinks are not followed). */
async function weightFiles(root: string, names: RegExp, signal?: AbortSignal): Promise<string[]> {
  const found: { file: string; size: number }[] = [];
  const walk = async (dir: string): Promise<void> => {
    signal?.throwIfAborted();
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && names.test(entry.name)) {
        found.push({ file: full, size: (await stat(full)).size });
      }
    }
  };
  await walk(root);
  return found.sort((a, b) => b.size - a.size).map((f) => f.file);
}

/** `readers` workers take the next file and read it through, discarding the bytes. */
async function readInto(files: string[], readers: number, signal?: AbortSignal): Promise<number> {
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (let i = next++; i < files.length; i = next++) {
      const handle = await open(files[i]!, "r");
      try {
        for (;;) {
          signal?.throwIfAborted();
          const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
          if (bytesRead === 0) break;
          bytes += bytesRead;
        }
      } finally {
        await handle.close();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, readers) }, worker));
  return bytes;
}
