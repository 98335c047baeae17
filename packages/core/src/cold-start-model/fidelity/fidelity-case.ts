import { z } from "zod";
import { parseInput } from "../../errors/parse-input";
import { Phase } from "../../vocabulary/index";
import { ColdStartScenario } from "../scenario-schema";

// One published measurement of a cold start (or of one of its phases) that the model did
// not see when its constants were set: the scenario that reproduces the source's set-up,
// the source's own words, and what the source left unstated and the case had to assume.
// Case files live in ./cases, one JSON array per source (see apps/agent/README.md).

const positive = z.number().positive();

export const FidelitySource = z
  .object({
    /**
     * Who measured it. Leave-one-source-out cross-validation leaves out every case with this
     * name at once, so cases from one team or one set-up share it even across URLs.
     */
    name: z.string().min(1),
    /** Where the measurement is published: a URL, or `owner/repo:path` for a file. */
    url: z.string().min(1),
    /** The source's sentence or table row that states the measured value, verbatim. */
    quote: z.string().min(1),
  })
  .strict();
export type FidelitySource = z.infer<typeof FidelitySource>;

export const FidelityHost = z
  .object({
    /** The host as the source states it (GPU, instance type, storage, network). */
    description: z.string().min(1),
    /**
     * Every figure of the scenario the source does not state, with the value chosen and why.
     * Empty when the source states everything the scenario needs.
     */
    assumptions: z.array(z.string().min(1)),
  })
  .strict();

/** The phases of a modelled start that the published seconds measure, or the whole start. */
export const ComparedPhases = z.union([z.literal("total"), z.array(Phase).min(1)]);
export type ComparedPhases = z.infer<typeof ComparedPhases>;

export const FidelityCase = z
  .object({
    /** Stable, unique across all files: `<source-slug>/<what>`. */
    id: z.string().regex(/^[a-z0-9][a-z0-9.-]*\/[a-z0-9][a-z0-9.-]*$/),
    source: FidelitySource,
    host: FidelityHost,
    /** The start as the model sees it; noise must be off (a case is one deterministic run). */
    scenario: ColdStartScenario,
    /** The measured value, in seconds. */
    publishedSeconds: positive,
    /** Which modelled phases the published seconds cover. */
    compare: ComparedPhases,
    /** Per-phase seconds where the source breaks the start down (keys are model phases). */
    publishedPhases: z.partialRecord(Phase, positive).optional(),
    /**
     * Comparison group: cases the source measured as alternative ways to the same ready
     * engine (start paths, sleep levels, loaders, compressions). The model must order the
     * group's cases as the source does.
     */
    comparesPaths: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((fidelityCase, ctx) => {
    if (fidelityCase.scenario.noise) {
      ctx.addIssue({
        code: "custom",
        path: ["scenario", "noise"],
        message: "a fidelity case runs the model without noise: set noise to false",
      });
    }
  });
export type FidelityCase = z.output<typeof FidelityCase>;

export const FidelityCaseFile = z.array(FidelityCase).min(1);

/** Parses one case file's JSON; throws AppError naming the file's entry and field. */
export function parseFidelityCaseFile(input: unknown, fileName: string): FidelityCase[] {
  return parseInput(FidelityCaseFile, input, fileName);
}

/** All cases of all files, refusing an id used twice (ids name cases in every report). */
export function collectFidelityCases(files: readonly FidelityCase[][]): FidelityCase[] {
  const cases = files.flat();
  const seen = new Set<string>();
  for (const fidelityCase of cases) {
    if (seen.has(fidelityCase.id)) {
      throw new Error(`fidelity case id ${fidelityCase.id} is used twice`);
    }
    seen.add(fidelityCase.id);
  }
  return cases;
}

/** Where the case files are: beside this module, so every caller reads the same suite. */
export const FIDELITY_CASES_DIRECTORY = new URL("./cases/", import.meta.url);
