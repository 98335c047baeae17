import { parseInput } from "@thaw/core";
import type { z } from "zod";

/**
 * A procedure's input parser from one of core's schemas. It parses with core's parseInput,
 * so a bad field is the same AppError REST answers (BAD_REQUEST or UNPROCESSABLE, `field`
 * naming it, prefixed with `where`; "" for a request whose members name themselves), and the
 * procedure is typed from the schema: what the client sends is the schema's input, what the
 * resolver gets its output (tRPC reads both from `_input` and `_output`, types only).
 */
class CoreInput<S extends z.ZodType> {
  declare readonly _input: z.input<S>;
  declare readonly _output: z.output<S>;

  constructor(
    private readonly schema: S,
    private readonly where: string,
  ) {}

  parse(raw: unknown): z.output<S> {
    return parseInput(this.schema, raw, this.where);
  }
}

export function coreInput<S extends z.ZodType>(schema: S, where = "input"): CoreInput<S> {
  return new CoreInput(schema, where);
}
