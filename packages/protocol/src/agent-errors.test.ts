import { describe, expect, it } from "vitest";
import { AGENT_CLIENT_ERROR_CODES, AGENT_ERRORS, isAgentErrorCode } from "./agent-errors.ts";

describe("the agent's error codes", () => {
  it("answer each code with a 4xx or 5xx status", () => {
    for (const [code, status] of Object.entries(AGENT_ERRORS)) {
      expect(code, code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(status >= 400 && status < 600, code).toBe(true);
    }
  });

  it("are the table's own keys: not what an object inherits, nor the client's codes", () => {
    expect(isAgentErrorCode("gpu_busy")).toBe(true);
    for (const code of ["constructor", "toString", "__proto__", "hasOwnProperty", "http_404", ""])
      expect(isAgentErrorCode(code), code).toBe(false);
    for (const code of AGENT_CLIENT_ERROR_CODES) expect(isAgentErrorCode(code), code).toBe(false);
  });
});
