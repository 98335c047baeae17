export {
  credentialsKeyEnv,
  databaseUrlEnv,
  ecrEndpointEnv,
  DEFAULT_LOG_LEVEL,
  LogLevel,
  logLevelEnv,
  metricsTokenEnv,
  otlpEndpointEnv,
  otlpHeadersEnv,
  presentEnv,
  queuePrefixEnv,
  redisUrlEnv,
} from "./env-fields.ts";
