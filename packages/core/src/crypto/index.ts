export {
  bearerMatches,
  hashesEqual,
  issuePrefixedSecret,
  parsePrefixedSecret,
  randomToken,
  sha256Hex,
} from "./secrets.ts";
