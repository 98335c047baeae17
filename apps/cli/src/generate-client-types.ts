import { writeFileSync } from "node:fs";
import { clientTypes, currentDocument, GENERATED_TYPES } from "./client-types.ts";

writeFileSync(GENERATED_TYPES, await clientTypes(currentDocument()));
console.error(`wrote ${GENERATED_TYPES}`);
