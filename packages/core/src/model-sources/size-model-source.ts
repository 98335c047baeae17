import { type HuggingFaceSourceConfig, sizeHuggingFaceModelSource } from "./hf-model-source.ts";
import { type HttpsModelSourceConfig, sizeHttpsModelSource } from "./https-model-source.ts";
import type { ModelArtifact } from "./model-artifact.ts";
import { modelSourceError } from "./model-source-error.ts";
import { parseModelSource } from "./parse-model-source.ts";
import {
  type S3Credentials,
  type S3ModelSourceConfig,
  sizeS3ModelSource,
} from "./s3-model-source.ts";

// A model source's size and format, so a deployment can be made from a model id alone
// (issue 19). Throws AppError on the modelSource field (see model-source-error.ts for which
// code and `problem`); a caller's abort is rethrown as it came.

export const DEFAULT_SIZING_TIMEOUT_MS = 10_000;

/** The operator's: where each scheme is asked, and how long a sizing may take. */
export interface ModelSourceConfig {
  /** For the whole sizing (a listing's pages, an index), not per request. */
  timeoutMs?: number;
  huggingFace?: HuggingFaceSourceConfig;
  s3?: S3ModelSourceConfig;
  https?: HttpsModelSourceConfig;
}

/** The deploying org's: never logged, sent only to the scheme they are for. */
export interface ModelSourceCredentials {
  /** For gated and private hf:// models. */
  huggingFaceToken?: string;
  /** For s3://; without them the control plane's own (the SDK's default chain). */
  s3?: S3Credentials;
}

export interface SizeModelSourceOptions {
  /** hf://owner/repo[/file], s3://bucket/key, gs://bucket/key, https://host/path. */
  source: string;
  credentials?: ModelSourceCredentials;
  config: ModelSourceConfig;
  /** hf:// only: a branch, tag or commit; the repo's default branch when absent. */
  revision?: string;
  signal?: AbortSignal;
}

export async function sizeModelSource(options: SizeModelSourceOptions): Promise<ModelArtifact> {
  const { source, credentials = {}, config, signal } = options;
  const timeoutMs = config.timeoutMs ?? DEFAULT_SIZING_TIMEOUT_MS;
  const parsed = parseModelSource(source);
  switch (parsed.scheme) {
    case "hf":
      return sizeHuggingFaceModelSource({
        source,
        repo: parsed.repo,
        path: parsed.path,
        revision: options.revision,
        token: credentials.huggingFaceToken,
        config: config.huggingFace ?? {},
        timeoutMs,
        signal,
      });
    case "s3":
      return sizeS3ModelSource({
        source,
        bucket: parsed.bucket,
        key: parsed.key,
        config: config.s3 ?? {},
        credentials: credentials.s3,
        timeoutMs,
        signal,
      });
    case "gs":
      // GCS needs its own credentials story (service accounts, HMAC keys) before Thaw can
      // read private buckets; until then the user says the size.
      throw modelSourceError("unsizable", "gs:// sizing is not supported yet; give modelBytes");
    case "https":
      return sizeHttpsModelSource({
        source,
        url: parsed.url,
        config: config.https ?? {},
        timeoutMs,
        signal,
      });
  }
}
