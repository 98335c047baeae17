export {
  getEndpointGpuCost,
  getOrgGpuCost,
  GpuCostQuery,
  GpuCostReport,
  GpuTimeCategory,
} from "./get-gpu-cost.ts";
