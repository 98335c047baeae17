// Figures over plain numbers, with no zod, no Node built-ins and no database: the browser,
// the benches and the use cases import the same definitions (@thaw/core/statistics).
export { quantile, quantiles } from "./quantile.ts";
