export { deleteRegistryCredential } from "./delete-registry-credential.ts";
export { listRegistryCredentials } from "./list-registry-credentials.ts";
export { putRegistryCredential } from "./put-registry-credential.ts";
export {
  HUGGING_FACE_REGISTRY,
  huggingFaceTokenFor,
  registryAuthForImages,
  type RegistryAuth,
  type RegistryAuthOptions,
} from "./registry-auth-for-images.ts";
export {
  PutRegistryCredentialInput,
  RegistryCredentialList,
  RegistryCredentialView,
  RegistryHost,
} from "./registry-credential-spec.ts";
export { parseSealingKey, sealSecret, openSealedSecret } from "./sealed-secret.ts";
