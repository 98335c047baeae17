// `pnpm --silent sim:coldstart <scenario.json>`: one simulated cold start, printed as one
// JSON document on stdout (bench-contracts.md). Bad input exits 2 with a message naming
// the file or the field.
import { readFileSync } from "node:fs";
import { isAppError } from "@thaw/core";
import { parseColdStartScenario, simulateColdStart } from "@thaw/core/cold-start-model";

function fail(message: string): never {
  process.stderr.write(`sim:coldstart: ${message}\n`);
  process.exit(2);
}

const file = process.argv[2];
if (!file || process.argv.length > 3) fail("usage: pnpm --silent sim:coldstart <scenario.json>");

let text: string;
try {
  text = readFileSync(file, "utf8");
} catch (error) {
  fail(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
}
let json: unknown;
try {
  json = JSON.parse(text);
} catch (error) {
  fail(`${file} is not valid JSON: ${(error as Error).message}`);
}
try {
  const result = simulateColdStart(parseColdStartScenario(json));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  if (isAppError(error)) fail(`${file}: ${error.message}`);
  throw error;
}
