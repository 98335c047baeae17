export { BoundedLabelValues, OVERFLOW_LABEL_VALUE } from "./bounded-label-values.ts";
