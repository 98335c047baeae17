import { readFileSync, readdirSync } from "node:fs";
import {
  FIDELITY_CASES_DIRECTORY,
  collectFidelityCases,
  parseFidelityCaseFile,
  type FidelityCase,
} from "./fidelity-case";

/**
 * Every case file beside this module, parsed and checked (ids unique). Throws an error that
 * names the file (and, for a schema error, the entry and field) on bad input.
 */
export function loadFidelitySuite(): FidelityCase[] {
  const files = readdirSync(FIDELITY_CASES_DIRECTORY)
    .filter((name) => name.endsWith(".json"))
    .sort();
  const parsed = files.map((name) => {
    const text = readFileSync(new URL(name, FIDELITY_CASES_DIRECTORY), "utf8");
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new Error(`cases/${name} is not valid JSON: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return parseFidelityCaseFile(data, `cases/${name}`);
  });
  return collectFidelityCases(parsed);
}
