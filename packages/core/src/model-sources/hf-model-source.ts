import type { AppError } from "../errors/index.ts";
import {
  detectModelFormat,
  filesOfNamedFile,
  formatOfFile,
  shardsOfIndex,
} from "./detect-model-format.ts";
import {
  filesOfModelInfo,
  HubModelInfo,
  hubErrorCode,
  isGated,
  modelInfoUrl,
  resolveUrl,
} from "./hf-hub-responses.ts";
import { listFiles, type ModelArtifact, type ModelFormat } from "./model-artifact.ts";
import {
  GIVE_MODEL_BYTES,
  OR_GIVE_MODEL_BYTES,
  modelSourceError,
  sizingDeadline,
  timeoutError,
} from "./model-source-error.ts";

// hf://owner/repo[/path] sized from the Hub's API: one model-info call lists every file with
// its bytes; the format's files are picked from the names (detect-model-format.ts), and a
// sharded checkpoint's index, when there is one, names its shards exactly. totalBytes is the
// weights' (what an engine downloads; config and tokenizer files are a few MB and left out).
// The Hub endpoint is the operator's (a mirror, or huggingface.co), so plain fetch is used;
// the client chooses only the repo and path, which the source policy has checked.

export const DEFAULT_HUGGING_FACE_ENDPOINT = "https://huggingface.co";

/** An index is a few hundred KB for the largest models; anything far larger is not one. */
const MAX_INDEX_BYTES = 16 * 1024 * 1024;

export interface HuggingFaceSourceConfig {
  /** The Hub (or a mirror) to ask; huggingface_hub reads it from HF_ENDPOINT. */
  endpoint?: string;
}

export interface SizeHuggingFaceModelSourceOptions {
  source: string;
  repo: string;
  /** A file or folder in the repo; null for the whole repo. */
  path: string | null;
  /** A branch, tag or commit; the default branch when absent. */
  revision?: string;
  /** The org's token, for gated and private models. */
  token?: string;
  config: HuggingFaceSourceConfig;
  timeoutMs: number;
  signal?: AbortSignal;
}

interface HubContext {
  options: SizeHuggingFaceModelSourceOptions;
  endpoint: string;
  signal: AbortSignal;
  timedOut: () => boolean;
}

export async function sizeHuggingFaceModelSource(
  options: SizeHuggingFaceModelSourceOptions,
): Promise<ModelArtifact> {
  const deadline = sizingDeadline(options.timeoutMs, options.signal);
  const hub: HubContext = {
    options,
    endpoint: (options.config.endpoint ?? DEFAULT_HUGGING_FACE_ENDPOINT).replace(/\/+$/, ""),
    signal: deadline.signal,
    timedOut: deadline.timedOut,
  };
  const infoResponse = await hubFetch(
    hub,
    modelInfoUrl(hub.endpoint, options.repo, options.revision),
  );
  if (!infoResponse.ok) throw refusal(hub, infoResponse, `hf://${options.repo}`);
  const parsed = HubModelInfo.safeParse(await readJson(hub, infoResponse, Infinity));
  if (!parsed.success)
    throw modelSourceError(
      "unreachable",
      `${hub.endpoint} did not answer with model info for ${options.repo}; try again later, ${OR_GIVE_MODEL_BYTES}`,
    );
  const info = parsed.data;
  const revision = info.sha ?? options.revision ?? "main";
  const sizes = filesOfModelInfo(info);

  // Gated files need a token whose account accepted the terms; without one no host will
  // download them, so say so now rather than at the first cold start.
  if (isGated(info) && !options.token)
    throw modelSourceError(
      "access-denied",
      `hf://${options.repo} is a gated model: accept its terms on the Hub and add a Hugging Face token for the org`,
    );

  const picked = pickWeights(options, [...sizes.keys()]);
  let weightFiles = picked.weightFiles;
  let checkedAccess = false;
  if (picked.indexFile) {
    const index = await fetchIndex(hub, revision, picked.indexFile);
    checkedAccess = true;
    const shards = shardsOfIndex(index, picked.indexFile);
    // The index is the checkpoint's own list: a repo may hold another copy of the weights
    // in the same format (Mistral's consolidated.safetensors beside the shards).
    if (shards && shards.every((shard) => sizes.has(shard))) weightFiles = shards;
  }
  if (isGated(info) && !checkedAccess) await checkReadAccess(hub, revision, weightFiles[0]!);

  const files = weightFiles.map((path) => ({ path, bytes: sizes.get(path) }));
  const unsized = files.find((file) => file.bytes === undefined);
  if (unsized)
    throw modelSourceError(
      "unsizable",
      `${hub.endpoint} did not give the size of ${unsized.path} (model info with blobs=true); ${GIVE_MODEL_BYTES}`,
    );
  const listed = listFiles(files.map((file) => ({ path: file.path, bytes: file.bytes ?? 0 })));
  if (listed.totalBytes === 0)
    throw modelSourceError("empty", `the weights of ${options.source} are empty files`);
  return {
    source: options.source,
    format: picked.format,
    sharded: picked.sharded,
    ...listed,
    revision,
  };
}

interface PickedWeights {
  format: ModelFormat;
  sharded: boolean;
  weightFiles: string[];
  indexFile: string | null;
}

/** The files the source means: a named file (with its split set), a folder's or the repo's weights. */
function pickWeights(options: SizeHuggingFaceModelSourceOptions, paths: string[]): PickedWeights {
  const where = `hf://${options.repo}${options.revision ? ` at ${options.revision}` : ""}`;
  const { path } = options;
  if (path !== null && paths.includes(path)) {
    const weightFiles = filesOfNamedFile(path, paths);
    return {
      format: formatOfFile(path),
      sharded: weightFiles.length > 1,
      weightFiles,
      indexFile: null,
    };
  }
  const folder = path === null ? "" : `${path}/`;
  const inFolder = paths.filter((p) => p.startsWith(folder)).map((p) => p.slice(folder.length));
  if (inFolder.length === 0)
    throw modelSourceError("not-found", `no file or folder ${path} in ${where}`);
  const detection = detectModelFormat(inFolder);
  if (detection.kind === "none")
    throw modelSourceError(
      "unsizable",
      `no model weights (.safetensors, .gguf, pytorch_model*.bin, .onnx) in ${where}${folder ? `/${path}` : ""}; name the weights file: hf://${options.repo}/<file>, ${OR_GIVE_MODEL_BYTES}`,
    );
  if (detection.kind === "ambiguous")
    throw modelSourceError(
      "ambiguous",
      `${where} holds ${detection.choices.length} ${detection.format} models (${detection.choices.slice(0, 3).join(", ")}${detection.choices.length > 3 ? ", ..." : ""}); name one: hf://${options.repo}/${folder}${detection.choices[0]}`,
    );
  return {
    format: detection.format,
    sharded: detection.sharded,
    weightFiles: detection.weightFiles.map((p) => folder + p),
    indexFile: detection.indexFile === null ? null : folder + detection.indexFile,
  };
}

async function fetchIndex(hub: HubContext, revision: string, indexFile: string): Promise<unknown> {
  const response = await hubFetch(
    hub,
    resolveUrl(hub.endpoint, hub.options.repo, revision, indexFile),
  );
  if (!response.ok) throw refusal(hub, response, `hf://${hub.options.repo}/${indexFile}`);
  return readJson(hub, response, MAX_INDEX_BYTES);
}

/** Whether the token may download a gated repo's files: a HEAD of one, redirect not followed. */
async function checkReadAccess(hub: HubContext, revision: string, file: string): Promise<void> {
  const response = await hubFetch(hub, resolveUrl(hub.endpoint, hub.options.repo, revision, file), {
    method: "HEAD",
    redirect: "manual",
  });
  if (response.status >= 400) throw refusal(hub, response, `hf://${hub.options.repo}/${file}`);
}

async function hubFetch(
  hub: HubContext,
  url: string,
  init: { method?: "GET" | "HEAD"; redirect?: "follow" | "manual" } = {},
): Promise<Response> {
  const { token } = hub.options;
  try {
    return await fetch(url, {
      method: init.method ?? "GET",
      redirect: init.redirect ?? "follow",
      headers: {
        accept: "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      signal: hub.signal,
    });
  } catch (error) {
    throw unanswered(hub, error);
  }
}

async function readJson(hub: HubContext, response: Response, maxBytes: number): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw unanswered(hub, error);
  }
  if (text.length > maxBytes)
    throw modelSourceError(
      "unsizable",
      `${response.url} is larger than ${maxBytes} bytes; ${GIVE_MODEL_BYTES}`,
    );
  try {
    return JSON.parse(text);
  } catch {
    throw modelSourceError(
      "unreachable",
      `${hub.endpoint} answered ${response.url} with something other than JSON; try again later, ${OR_GIVE_MODEL_BYTES}`,
    );
  }
}

/** A request that got no answer: the deadline's (422), the caller's abort (as is), or the network's. */
function unanswered(hub: HubContext, error: unknown): unknown {
  if (hub.timedOut())
    return timeoutError(`the Hugging Face Hub (${hub.endpoint})`, hub.options.timeoutMs);
  if (hub.signal.aborted) return error;
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return modelSourceError(
    "unreachable",
    `could not reach the Hugging Face Hub at ${hub.endpoint}${cause ? ` (${cause})` : ""}; try again later, ${OR_GIVE_MODEL_BYTES}`,
  );
}

/** A refusal from the Hub, said as what the user should do about it. */
function refusal(hub: HubContext, response: Response, what: string): AppError {
  const code = hubErrorCode(response.headers);
  const { token, revision } = hub.options;
  const status = response.status;
  if (code === "GatedRepo")
    return modelSourceError(
      "access-denied",
      token
        ? `${what} is a gated model the org's Hugging Face token may not read: accept its terms on the Hub with the token's account`
        : `${what} is a gated model: accept its terms on the Hub and add a Hugging Face token for the org`,
    );
  if (code === "RevisionNotFound")
    return modelSourceError(
      "not-found",
      `no revision ${revision ?? "main"} of hf://${hub.options.repo}`,
    );
  if (code === "EntryNotFound" || (status === 404 && what !== `hf://${hub.options.repo}`))
    return modelSourceError("not-found", `no file ${what} on the Hub`);
  if (status === 404) return modelSourceError("not-found", `no such model ${what} on the Hub`);
  if (status === 401 || status === 403)
    return modelSourceError(
      "access-denied",
      token
        ? `the org's Hugging Face token may not read ${what} (HTTP ${status}): check the token and that its account can read the repo`
        : `no such model ${what}, or a gated or private model: add a Hugging Face token for the org`,
    );
  if (status === 429 || status >= 500)
    return modelSourceError(
      "unreachable",
      `the Hugging Face Hub answered HTTP ${status} for ${what}; try again later, ${OR_GIVE_MODEL_BYTES}`,
    );
  return modelSourceError(
    "unsizable",
    `the Hugging Face Hub answered HTTP ${status} for ${what}; ${GIVE_MODEL_BYTES}`,
  );
}
