// What-if: an endpoint's recorded load replayed under other settings (issue 18).
export * from "./what-if-schemas.ts";
export * from "./load-to-requests.ts";
export * from "./what-if-fleet.ts";
export * from "./what-if-points.ts";
export * from "./what-if-window.ts";
export * from "./build-endpoint-what-if.ts";
export * from "./get-endpoint-what-if.ts";
