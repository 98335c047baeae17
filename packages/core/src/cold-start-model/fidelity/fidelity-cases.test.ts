import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isAppError } from "../../errors/index";
import { PHYSICS } from "../physical-constants";
import { simulateColdStart } from "../simulate-cold-start";
import {
  FIDELITY_CASES_DIRECTORY,
  collectFidelityCases,
  parseFidelityCaseFile,
  type FidelityCase,
} from "./fidelity-case";
import { predictCase } from "./predict-case";

const files = readdirSync(FIDELITY_CASES_DIRECTORY)
  .filter((name) => name.endsWith(".json"))
  .sort();
const read = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(name, FIDELITY_CASES_DIRECTORY), "utf8"));
const suite = collectFidelityCases(files.map((name) => parseFidelityCaseFile(read(name), name)));

describe("fidelity suite: every case file parses against the case schema", () => {
  it.each(files)("%s", (name) => {
    const cases = parseFidelityCaseFile(read(name), name);
    expect(cases.length).toBeGreaterThan(0);
    for (const fidelityCase of cases) {
      // One file per source, named after it; its ids start with the same slug.
      const slug = name.replace(/\.json$/, "");
      expect(fidelityCase.source.name).toBe(slug);
      expect(fidelityCase.id.split("/")[0]).toBe(slug);
      expect(fidelityCase.source.quote.length).toBeGreaterThan(20);
    }
  });

  it("holds at least 25 cases from at least 6 sources, ids unique", () => {
    expect(suite.length).toBeGreaterThanOrEqual(25);
    expect(new Set(suite.map((c) => c.source.name)).size).toBeGreaterThanOrEqual(6);
    expect(new Set(suite.map((c) => c.id)).size).toBe(suite.length);
  });

  it("every case runs through the model and compares phases the model produces", () => {
    for (const fidelityCase of suite) {
      const result = simulateColdStart(fidelityCase.scenario, {}, PHYSICS);
      const produced = new Set(result.phases.map((timing) => timing.phase));
      const compared = fidelityCase.compare === "total" ? [] : fidelityCase.compare;
      for (const phase of [...compared, ...Object.keys(fidelityCase.publishedPhases ?? {})]) {
        expect(produced, `${fidelityCase.id} compares ${phase}`).toContain(phase);
      }
      expect(predictCase(fidelityCase).predictedSeconds).toBeGreaterThan(0);
    }
  });
});

describe("fidelity case schema refuses what a case must not be", () => {
  const valid = (): Record<string, unknown> =>
    JSON.parse(JSON.stringify(suite[0])) as Record<string, unknown>;

  const refusal = (input: unknown) => {
    try {
      parseFidelityCaseFile([input], "cases/x.json");
    } catch (error) {
      if (isAppError(error)) return error.message;
      throw error;
    }
    return undefined;
  };

  it("accepts a case as stored", () => {
    expect(refusal(valid())).toBeUndefined();
  });

  it("refuses a case whose model run has noise on", () => {
    const input = valid();
    (input.scenario as Record<string, unknown>).noise = true;
    expect(refusal(input)).toMatch(/^cases\/x\.json\.0\.scenario\.noise: /);
  });

  it("refuses a case without its source's quote, naming the field", () => {
    const input = valid();
    delete (input.source as Record<string, unknown>).quote;
    expect(refusal(input)).toMatch(/^cases\/x\.json\.0\.source\.quote: /);
  });

  it("refuses an unknown key instead of ignoring it", () => {
    const input = { ...valid(), publishedSecs: 3 };
    expect(refusal(input)).toMatch(/^cases\/x\.json\.0\.publishedSecs: /);
  });

  it("refuses a published phase that is not a model phase", () => {
    const input = { ...valid(), publishedPhases: { unpack: 3 } };
    expect(refusal(input)).toMatch(/^cases\/x\.json\.0\.publishedPhases/);
  });

  it("refuses an id used twice across files", () => {
    const once = suite[0] as FidelityCase;
    expect(() => collectFidelityCases([[once], [once]])).toThrow(/used twice/);
  });
});
