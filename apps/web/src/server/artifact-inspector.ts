import {
  AppError,
  huggingFaceTokenFor,
  registryAuthForImages,
  trustRegistries,
  type ArtifactInspector,
} from "@thaw/core";
import { inspectImage } from "@thaw/core/images";
import { sizeModelSource } from "@thaw/core/model-sources";
import { fetchPublic } from "@thaw/core/net";
import { env, isNextBuild } from "../env.ts";
import { getDb } from "./db.ts";
import { sealingKey } from "./sealing-key.ts";

// The web app's artifact inspector: registries and model sources asked on an org's behalf,
// bounded by the operator's timeout, through fetchPublic (client-named hosts are checked at
// connect time), trusting only the registries the operator listed.

/** A manifest or token answer larger than this is refused, not read. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

let inspector: ArtifactInspector | undefined;

// The schemas' text check (imageRefProblem) reads the operator's list: set when this module
// loads, so a route or procedure that imports it parses its input with the list in place.
if (!isNextBuild()) trustRegistries(env().THAW_TRUSTED_REGISTRIES);

export function artifactInspector(): ArtifactInspector {
  if (inspector) return inspector;
  const e = env();
  const trusted = new Set(e.THAW_TRUSTED_REGISTRIES);
  const timeoutMs = e.THAW_INSPECTION_TIMEOUT_SECONDS * 1000;
  inspector = {
    inspectImage: ({ ref, field, orgId }) =>
      inspectImage({
        ref,
        field,
        config: {
          http: (url, init) =>
            fetchPublic(url, {
              ...init,
              maxBodyBytes: Math.min(init.maxBodyBytes, MAX_ANSWER_BYTES),
              timeoutMs,
              trustedHosts: trusted,
            }),
          // The org's stored credential for the registry, opened for this inspection only.
          credentialsFor: async () =>
            (
              await registryAuthForImages({
                db: getDb(),
                orgId,
                imageRefs: [ref],
                sealingKey: sealingKey(),
                ecrEndpoint: e.THAW_ECR_ENDPOINT,
              })
            )[0] ?? null,
          trustedRegistries: trusted,
          estargzTagSuffix: e.THAW_ESTARGZ_TAG_SUFFIX,
        },
      }),
    sizeModelSource: async ({ source, field, orgId }) =>
      sizeModelSource({
        source,
        // The org's Hugging Face token, for gated and private models; opened for this sizing.
        credentials: source.startsWith("hf://")
          ? {
              huggingFaceToken: await huggingFaceTokenFor({
                db: getDb(),
                orgId,
                sealingKey: sealingKey(),
              }),
            }
          : {},
        config: {
          timeoutMs,
          huggingFace: { endpoint: e.THAW_HF_ENDPOINT },
          s3: {
            region: e.THAW_MODEL_S3_REGION,
            ...(e.THAW_MODEL_S3_ENDPOINT && { endpoint: e.THAW_MODEL_S3_ENDPOINT }),
          },
          https: { trustedHosts: trusted },
        },
      }).catch((error: unknown) => {
        throw renamedField(error, "modelSource", field);
      }),
  };
  return inspector;
}

/** A model-source error as the request named the field (`body.deployment.modelSource`). */
function renamedField(error: unknown, from: string, to: string): unknown {
  if (!(error instanceof AppError) || error.details?.field !== from) return error;
  const message = error.message.startsWith(`${from}:`)
    ? `${to}:${error.message.slice(from.length + 1)}`
    : error.message;
  return new AppError(error.code, message, { ...error.details, field: to });
}
