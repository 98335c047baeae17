export {
  credentialsKeyEnv,
  databaseUrlEnv,
  ecrEndpointEnv,
  DEFAULT_LOG_LEVEL,
  LogLevel,
  logLevelEnv,
  metricsTokenEnv,
  presentEnv,
  queuePrefixEnv,
  redisUrlEnv,
} from "./env-fields.ts";
