export { DEMO_ENDPOINTS, DEMO_ORG, DEMO_USER, type DemoEndpoint } from "./demo-catalog.ts";
export { demoDeploymentColumns, seedDemo } from "./seed-demo.ts";
