// @thaw/core/model-sources: a model source's size and format (issue 19). Node only (the S3
// SDK, node:http); a browser bundle imports the schema from model-artifact.ts alone.
export {
  detectModelFormat,
  filesOfNamedFile,
  formatOfFile,
  type ModelFormatDetection,
} from "./detect-model-format.ts";
export {
  DEFAULT_HUGGING_FACE_ENDPOINT,
  type HuggingFaceSourceConfig,
  sizeHuggingFaceModelSource,
  type SizeHuggingFaceModelSourceOptions,
} from "./hf-model-source.ts";
export {
  type HttpsModelSourceConfig,
  sizeHttpsModelSource,
  type SizeHttpsModelSourceOptions,
} from "./https-model-source.ts";
export {
  MAX_LISTED_FILES,
  MODEL_FORMAT,
  MODEL_FORMATS,
  ModelArtifact,
  ModelArtifactFile,
  type ModelFormat,
} from "./model-artifact.ts";
export { MODEL_SOURCE_FIELD, type ModelSourceProblem } from "./model-source-error.ts";
export { type ParsedModelSource, parseModelSource } from "./parse-model-source.ts";
export {
  MAX_PREFIX_OBJECTS,
  type S3Credentials,
  type S3ModelSourceConfig,
  sizeS3ModelSource,
  type SizeS3ModelSourceOptions,
} from "./s3-model-source.ts";
export {
  DEFAULT_SIZING_TIMEOUT_MS,
  type ModelSourceConfig,
  type ModelSourceCredentials,
  sizeModelSource,
  type SizeModelSourceOptions,
} from "./size-model-source.ts";
