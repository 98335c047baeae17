import {
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from "@aws-sdk/client-s3";
import { detectModelFormat, formatOfFile } from "./detect-model-format.ts";
import { listFiles, type ModelArtifact, type ModelArtifactFile } from "./model-artifact.ts";
import {
  GIVE_MODEL_BYTES,
  OR_GIVE_MODEL_BYTES,
  modelSourceError,
  sizingDeadline,
  timeoutError,
} from "./model-source-error.ts";

// s3://bucket/key sized without reading a byte of it: HeadObject for an object, a paginated
// ListObjectsV2 for a prefix (a folder of shards). S3 is the operator's (their account,
// their endpoint), so the SDK talks to it directly rather than through the public-address
// fetcher; the client chooses only bucket and key, which the source policy has checked.

/** A prefix with more objects than this is not one model: sizing it would list forever. */
export const MAX_PREFIX_OBJECTS = 10_000;

export interface S3ModelSourceConfig {
  /** The region to ask first; a bucket elsewhere is followed to its region. */
  region?: string;
  /** An S3-compatible endpoint (MinIO, R2, moto in tests); path-style is then the default. */
  endpoint?: string;
  forcePathStyle?: boolean;
}

/** Keys to read with; without them the SDK's default chain (env, profile, instance role). */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SizeS3ModelSourceOptions {
  source: string;
  bucket: string;
  key: string;
  config: S3ModelSourceConfig;
  credentials?: S3Credentials;
  timeoutMs: number;
  signal?: AbortSignal;
}

export async function sizeS3ModelSource(options: SizeS3ModelSourceOptions): Promise<ModelArtifact> {
  const { config, credentials } = options;
  const client = new S3Client({
    region: config.region ?? "us-east-1",
    ...(config.endpoint
      ? { endpoint: config.endpoint, forcePathStyle: config.forcePathStyle ?? true }
      : { forcePathStyle: config.forcePathStyle ?? false }),
    ...(credentials ? { credentials } : {}),
    followRegionRedirects: true,
    maxAttempts: 2,
  });
  const deadline = sizingDeadline(options.timeoutMs, options.signal);
  try {
    const named = options.key === "" || options.key.endsWith("/");
    if (!named) {
      const object = await headObject(client, options.bucket, options.key, deadline.signal);
      if (object) return objectArtifact(options, object);
    }
    const prefix = named ? options.key : `${options.key}/`;
    return await prefixArtifact(options, prefix, client, deadline.signal);
  } catch (error) {
    throw s3Failure(error, options, deadline.timedOut());
  } finally {
    client.destroy();
  }
}

interface HeadAnswer {
  bytes: number;
  revision: string | undefined;
}

/** The object's size, or null when no object has that key (it may be a prefix). */
async function headObject(
  client: S3Client,
  bucket: string,
  key: string,
  signal: AbortSignal,
): Promise<HeadAnswer | null> {
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), {
      abortSignal: signal,
    });
    const version = head.VersionId && head.VersionId !== "null" ? head.VersionId : undefined;
    return { bytes: head.ContentLength ?? 0, revision: version ?? head.ETag?.replace(/"/g, "") };
  } catch (error) {
    // HeadObject has no body, so a missing key is a bare 404 ("NotFound"); a missing bucket
    // is a 404 too, and the listing that follows says which.
    if (statusOf(error) === 404) return null;
    throw error;
  }
}

function objectArtifact(options: SizeS3ModelSourceOptions, object: HeadAnswer): ModelArtifact {
  if (object.bytes === 0) throw modelSourceError("empty", `${options.source} is an empty object`);
  const path = options.key.slice(options.key.lastIndexOf("/") + 1);
  return {
    source: options.source,
    format: formatOfFile(path),
    sharded: false,
    ...listFiles([{ path, bytes: object.bytes }]),
    ...(object.revision ? { revision: object.revision } : {}),
  };
}

/**
 * Everything below a prefix: a host downloads the whole prefix, so every object counts
 * toward totalBytes, and the names tell the format.
 */
async function prefixArtifact(
  options: SizeS3ModelSourceOptions,
  prefix: string,
  client: S3Client,
  signal: AbortSignal,
): Promise<ModelArtifact> {
  const files: ModelArtifactFile[] = [];
  let token: string | undefined;
  do {
    const page: ListObjectsV2CommandOutput = await client.send(
      new ListObjectsV2Command({
        Bucket: options.bucket,
        Prefix: prefix,
        ContinuationToken: token,
      }),
      { abortSignal: signal },
    );
    for (const object of page.Contents ?? []) {
      // A console-made "folder" is an empty object whose key ends in "/": not a file.
      if (!object.Key || object.Key.endsWith("/")) continue;
      files.push({ path: object.Key.slice(prefix.length), bytes: object.Size ?? 0 });
    }
    if (files.length > MAX_PREFIX_OBJECTS)
      throw modelSourceError(
        "too-many-files",
        `s3://${options.bucket}/${prefix} holds more than ${MAX_PREFIX_OBJECTS} objects, more than one model has; point at the model's own folder, ${OR_GIVE_MODEL_BYTES}`,
      );
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);

  if (files.length === 0)
    throw modelSourceError(
      "not-found",
      options.key === "" || options.key.endsWith("/")
        ? `nothing under s3://${options.bucket}/${prefix}; check the bucket and prefix`
        : `no object ${options.source}, and nothing under s3://${options.bucket}/${prefix}; check the key`,
    );
  const listed = listFiles(files);
  if (listed.totalBytes === 0)
    throw modelSourceError("empty", `every object under ${options.source} is empty`);
  const detection = detectModelFormat(files.map((file) => file.path));
  if (detection.kind === "ambiguous")
    throw modelSourceError(
      "ambiguous",
      `s3://${options.bucket}/${prefix} holds ${detection.choices.length} ${detection.format} models (${detection.choices.slice(0, 3).join(", ")}${detection.choices.length > 3 ? ", ..." : ""}); name one object: s3://${options.bucket}/${prefix}<file>`,
    );
  return {
    source: options.source,
    format: detection.kind === "weights" ? detection.format : "unknown",
    sharded: detection.kind === "weights" ? detection.sharded : files.length > 1,
    ...listed,
  };
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** An SDK failure as the client should read it. */
function s3Failure(error: unknown, options: SizeS3ModelSourceOptions, timedOut: boolean): unknown {
  if (timedOut) return timeoutError(`s3://${options.bucket}`, options.timeoutMs);
  const name = (error as { name?: string } | null)?.name;
  // The caller's own cancellation and our own refusals pass through unchanged.
  if (name === "AbortError" || name === "AppError") return error;
  const status = statusOf(error);
  if (name === "NoSuchBucket" || (status === 404 && name !== "NoSuchKey"))
    return modelSourceError("not-found", `no bucket ${options.bucket}; check the source`);
  if (status === 403 || status === 401)
    return modelSourceError(
      "access-denied",
      `Thaw may not read s3://${options.bucket}: grant its role s3:GetObject and s3:ListBucket on the bucket (${name ?? `HTTP ${status}`})`,
    );
  if (name === "CredentialsProviderError")
    return modelSourceError(
      "unsizable",
      `the control plane has no AWS credentials to read s3:// sources; give modelBytes yourself`,
    );
  const what = name ?? (error instanceof Error ? error.message : String(error));
  if (status !== undefined && status >= 400 && status < 500)
    return modelSourceError(
      "unsizable",
      `S3 refused to size ${options.source} (HTTP ${status} ${what}); ${GIVE_MODEL_BYTES}`,
    );
  return modelSourceError(
    "unreachable",
    `could not size ${options.source} (${status ? `HTTP ${status} ` : ""}${what}); try again later, ${OR_GIVE_MODEL_BYTES}`,
  );
}
