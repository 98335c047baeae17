export {
  hashesEqual,
  issuePrefixedSecret,
  parsePrefixedSecret,
  randomToken,
  sha256Hex,
} from "./secrets.ts";
export { deriveNodeCredential, MIN_NODE_CREDENTIAL_SECRET_LENGTH } from "./node-credential.ts";
