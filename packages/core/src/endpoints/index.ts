export { listEndpoints } from "./list-endpoints.ts";
