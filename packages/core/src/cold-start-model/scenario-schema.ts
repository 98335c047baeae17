import {
  LayerCompression,
  LayerContent,
  Phase,
  ScenarioEngine,
  ScenarioHost,
  ScenarioImage,
  ScenarioKernelCache,
  ScenarioLayer,
  ScenarioLazy,
  ScenarioPeer,
  ScenarioRestore,
  ScenarioWake,
  StartPath,
} from "@thaw/protocol";
import { z } from "zod";
import { parseInput } from "../errors/parse-input";

// The `sim:coldstart` scenario of docs/bench-contracts.md. It is a public contract: add
// optional fields, never rename. Every object is strict so a typo is an error that names
// the field instead of a silently ignored key. Sizes are bytes, times seconds. Its blocks
// (host, image, engine, lazy, restore, wake, peer, kernelCache) are the agent protocol's, which carries them to
// simulated hosts; they are re-exported here for the model's users.
export {
  LayerCompression,
  LayerContent,
  ScenarioEngine,
  ScenarioHost,
  ScenarioImage,
  ScenarioKernelCache,
  ScenarioLayer,
  ScenarioLazy,
  ScenarioPeer,
  ScenarioRestore,
  ScenarioWake,
};

const nonNegative = z.number().nonnegative();
const byteCount = z.number().int().nonnegative();

export const ColdStartScenario = z
  .object({
    seed: z.number().int().default(1),
    noise: z.boolean().default(true),
    host: ScenarioHost,
    image: ScenarioImage,
    engine: ScenarioEngine,
    path: StartPath,
    lazy: ScenarioLazy.prefault({}),
    restore: ScenarioRestore.prefault({}),
    /** The wake path: how the sleeping engine left its weights. */
    wake: ScenarioWake.prefault({}),
    /** The peer path: the serving replica the weights come from, and its host. */
    peer: ScenarioPeer.prefault({}),
    /**
     * Extension (optional): the deployment's compiled-kernel caches for this host's GPU and
     * driver are in the operator's cache store; a start that compiles fetches them first.
     */
    kernelCache: ScenarioKernelCache.optional(),
  })
  .strict()
  .superRefine((scenario, ctx) => {
    if (scenario.path === "lazy" && scenario.image.format !== "estargz") {
      ctx.addIssue({
        code: "custom",
        path: ["image", "format"],
        message: 'path "lazy" needs an "estargz" image: plain OCI layers are not seekable',
      });
    }
  });

export type ColdStartScenario = z.output<typeof ColdStartScenario>;
export type ColdStartScenarioInput = z.input<typeof ColdStartScenario>;

/** Parses untrusted scenario JSON; throws AppError(BAD_REQUEST) naming the field, e.g. `scenario.host.bogus`. */
export function parseColdStartScenario(input: unknown): ColdStartScenario {
  return parseInput(ColdStartScenario, input, "scenario");
}

export const PhaseTiming = z
  .object({ phase: Phase, seconds: nonNegative, bytes: byteCount })
  .strict();
export type PhaseTiming = z.infer<typeof PhaseTiming>;

export const ColdStartResult = z
  .object({
    path: StartPath,
    /** ARCHITECTURE.md §4 order; a failed start ends with the phase that failed (no `ready`). */
    phases: z.array(PhaseTiming),
    /** Sum of the phases. */
    totalSeconds: nonNegative,
    /** Extension (optional): present when failure injection failed the start. */
    failure: z.object({ phase: Phase, message: z.string() }).strict().optional(),
  })
  .strict();
export type ColdStartResult = z.infer<typeof ColdStartResult>;
