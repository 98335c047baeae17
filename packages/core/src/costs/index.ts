export {
  getEndpointGpuCost,
  getOrgGpuCost,
  GpuCostQuery,
  GpuCostReport,
  GpuTimeCategory,
  GetEndpointGpuCostInput,
} from "./get-gpu-cost.ts";
export { readRecentGpuTime, type RecentGpuTime } from "./read-recent-gpu-time.ts";
