export { getColdStart, GetColdStartInput } from "./get-cold-start.ts";
export { listColdStarts, ListColdStartsInput } from "./list-cold-starts.ts";
