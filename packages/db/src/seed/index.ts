export { DEMO_ENDPOINTS, DEMO_ORG, DEMO_USER, type DemoEndpoint } from "./demo-catalog.ts";
export { seedDemo } from "./seed-demo.ts";
