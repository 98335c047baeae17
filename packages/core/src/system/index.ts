export {
  ControlPlaneHealth,
  getControlPlaneHealth,
  SERVICE_STALE_AFTER_SECONDS,
} from "./get-control-plane-health.ts";
export { recordServiceHeartbeat } from "./record-service-heartbeat.ts";
export { readFleetGauges, type FleetGauges, type FleetGpuState } from "./read-fleet-gauges.ts";
