export * from "./image-reference.ts";
export * from "./inspect-image.ts";
export * from "./layer-facts.ts";
export * from "./registry-session.ts";
