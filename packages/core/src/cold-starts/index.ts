export { ColdStartView, getColdStart, GetColdStartInput } from "./get-cold-start.ts";
export {
  ColdStartListItem,
  ColdStartListItems,
  listColdStarts,
  ListColdStartsInput,
} from "./list-cold-starts.ts";
