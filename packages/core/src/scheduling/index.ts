// Scheduling decisions (ARCHITECTURE.md §5): pure functions, plain data in, decisions out.
export * from "./start-option";
export * from "./update-history-stat";
export * from "./predict-time-to-ready";
export * from "./option-predictor";
export * from "./enumerate-start-options";
export * from "./choose-start-option";
export * from "./autoscale-from-signal";
export * from "./plan-warm-pool";
export * from "./cost-optimal-windows";
export * from "./decide-snapshot-capture";
export * from "./wait-price";
export * from "./effective-disk-figures";
export * from "./node-scenario-host";
