export {
  credentialsKeyEnv,
  databaseUrlEnv,
  ecrEndpointEnv,
  DEFAULT_LOG_LEVEL,
  LogLevel,
  logLevelEnv,
  presentEnv,
  queuePrefixEnv,
  redisUrlEnv,
} from "./env-fields.ts";
