export { startAgentStandIn, type AgentStandIn, type StandInStart } from "./agent-stand-in.ts";
export { testTlsCertificate } from "./tls-certificate.ts";
