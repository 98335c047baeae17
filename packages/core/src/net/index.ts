export * from "./public-fetch.ts";
