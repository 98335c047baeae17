import { z } from "zod";
import { describe, expect, it } from "vitest";
import {
  AppError,
  ERROR_CODE_TABLE,
  httpStatusOf,
  parseInput,
  trpcCodeOf,
  type AppErrorCode,
} from "./index.ts";

describe("error code table", () => {
  it("maps every code to a 4xx or 5xx status and a tRPC code", () => {
    for (const code of Object.keys(ERROR_CODE_TABLE) as AppErrorCode[]) {
      expect(httpStatusOf(code)).toBeGreaterThanOrEqual(400);
      expect(trpcCodeOf(code)).toMatch(/^[A-Z_]+$/);
    }
    expect(httpStatusOf("NOT_FOUND")).toBe(404);
    expect(httpStatusOf("RATE_LIMITED")).toBe(429);
    expect(trpcCodeOf("UNAUTHENTICATED")).toBe("UNAUTHORIZED");
  });

  it("keeps client errors distinct from server errors", () => {
    const clientCodes = (Object.keys(ERROR_CODE_TABLE) as AppErrorCode[]).filter(
      (c) => httpStatusOf(c) < 500,
    );
    expect(clientCodes).not.toContain("INTERNAL");
    expect(clientCodes).toContain("BAD_REQUEST");
  });
});

describe("parseInput", () => {
  const Schema = z
    .object({ minReplicas: z.number().int().min(0), maxReplicas: z.number().int().min(1) })
    .strict();

  it("returns parsed data for valid input", () => {
    expect(parseInput(Schema, { minReplicas: 0, maxReplicas: 2 })).toEqual({
      minReplicas: 0,
      maxReplicas: 2,
    });
  });

  it("throws BAD_REQUEST naming the failing field with its location", () => {
    try {
      parseInput(Schema, { minReplicas: -1, maxReplicas: 2 }, "body");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      const e = error as AppError;
      expect(e.code).toBe("BAD_REQUEST");
      expect(e.details?.field).toBe("body.minReplicas");
      expect(e.message).toContain("body.minReplicas");
    }
  });

  it("names a field by its own path when the input's members name themselves (no prefix)", () => {
    const Request = z.object({ endpoint: z.string(), changes: Schema }).strict();
    try {
      parseInput(Request, { endpoint: "e", changes: { minReplicas: -1, maxReplicas: 2 } }, "");
      expect.unreachable();
    } catch (error) {
      expect((error as AppError).details?.field).toBe("changes.minReplicas");
    }
    try {
      parseInput(Schema, "not an object", "");
      expect.unreachable();
    } catch (error) {
      expect((error as AppError).details?.field).toBe("input");
    }
  });

  it("names unknown (mass-assigned) fields", () => {
    try {
      parseInput(Schema, { minReplicas: 0, maxReplicas: 1, orgId: "x" }, "body");
      expect.unreachable();
    } catch (error) {
      expect((error as AppError).details?.field).toBe("body.orgId");
    }
  });

  it("answers UNPROCESSABLE when only a rule beyond the schema's JSON form refused the input", () => {
    const Bounded = Schema.refine((b) => b.minReplicas <= b.maxReplicas, {
      message: "minReplicas is above maxReplicas",
      path: ["minReplicas"],
    });
    const codeOf = (input: unknown) => {
      try {
        parseInput(Bounded, input, "body");
      } catch (error) {
        return [(error as AppError).code, (error as AppError).details?.field];
      }
      return ["ok"];
    };
    expect(codeOf({ minReplicas: 3, maxReplicas: 2 })).toEqual([
      "UNPROCESSABLE",
      "body.minReplicas",
    ]);
    expect(codeOf({ minReplicas: "3", maxReplicas: 2 })).toEqual([
      "BAD_REQUEST",
      "body.minReplicas",
    ]);
    expect(codeOf({ minReplicas: 1, maxReplicas: 2 })).toEqual(["ok"]);
  });
});
