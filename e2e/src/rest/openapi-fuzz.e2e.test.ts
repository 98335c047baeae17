import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API_KEY_SCOPES } from "@thaw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../stack.ts";
import { newApiKey } from "./rest-client.ts";

// schemathesis fuzzes the REST API from the OpenAPI document the server serves, against the
// built server with a scheduler and sim hosts behind it (so cold starts exist to read), with
// every check and every phase: examples, coverage (undeclared methods included), fuzzing, and
// the stateful phase that follows the document's links from a created endpoint. Any failure
// fails the test, with schemathesis's own report. THAW_FUZZ_SEED picks another seed (the
// default is fixed so a CI run is reproducible); THAW_FUZZ_EXAMPLES raises the cases;
// THAW_FUZZ_OUTPUT names a file to keep schemathesis's whole report in.

const CONFIG = join(import.meta.dirname, "..", "..", "schemathesis.toml");
const SEED = process.env.THAW_FUZZ_SEED ?? "20261124";
const EXAMPLES = process.env.THAW_FUZZ_EXAMPLES ?? "50";

function run(command: string, args: string[], cwd: string) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("REST v1 fuzzed from its OpenAPI document", () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    // The fuzzer sends thousands of requests a minute: this key's limit must not be the answer.
    stack = await startStack({
      webEnv: {
        THAW_REST_RATE_LIMIT_PER_MINUTE: "1000000",
        THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE: "1000000",
        THAW_API_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
        // Registry credentials on, as a production dashboard has them (off, PUT is a 503).
        THAW_CREDENTIALS_KEY: randomBytes(32).toString("base64"),
        // Sizing an hf:// model fails fast (nothing listens there): a 422 naming the field.
        THAW_HF_ENDPOINT: "http://127.0.0.1:9",
        THAW_INSPECTION_TIMEOUT_SECONDS: "2",
      },
    });
    key = await newApiKey(stack.database.db, stack.orgId, API_KEY_SCOPES, { name: "fuzz" });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("finds no failure with every check and phase", { timeout: 600_000 }, async () => {
    const binary = process.env.THAW_SCHEMATHESIS;
    if (!binary)
      throw new Error(
        "THAW_SCHEMATHESIS is not set: run 'bash infra/dev/test.sh' (it installs schemathesis into .data/schemathesis) or point it at a schemathesis binary.",
      );
    // schemathesis writes .hypothesis/ and .schemathesis/ into its working directory.
    const cwd = mkdtempSync(join(tmpdir(), "thaw-fuzz-"));
    const { code, output } = await run(
      binary,
      [
        "--config-file",
        CONFIG,
        "run",
        `${stack.baseUrl}/api/v1/openapi.json`,
        "--header",
        `Authorization: Bearer ${key}`,
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        EXAMPLES,
        "--seed",
        SEED,
        "--no-color",
      ],
      cwd,
    );
    const summary = output.slice(output.lastIndexOf("SUMMARY"));
    console.log(`schemathesis (seed ${SEED}, ${EXAMPLES} examples): ${summary.slice(0, 2_000)}`);
    if (process.env.THAW_FUZZ_OUTPUT) writeFileSync(process.env.THAW_FUZZ_OUTPUT, output);
    // The failures' and errors' heads (operation, check, status; or the network error and the
    // request that met it) before their bodies: a generated body can run to tens of kilobytes
    // and push them out of a tail.
    const heads = ["FAILURES", "ERRORS"]
      .map((section) => output.indexOf(section))
      .filter((at) => at >= 0)
      .map((at) => output.slice(at, at + 4_000))
      .join("\n…\n");
    expect(code, `${heads}\n…\n${summary.slice(0, 2_000)}`).toBe(0);
    expect(output).toMatch(/Test cases:\s+\d+ generated, \d+ passed/);
    expect(output).not.toMatch(/Authentication failed/);
  });
});
