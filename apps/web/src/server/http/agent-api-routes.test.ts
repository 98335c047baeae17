import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AGENT_API_PREFIX, CONTROL_PLANE_PATHS } from "@thaw/protocol";
import { describe, expect, it } from "vitest";

// The agent API's routes are files (app/api/agent/v1/<call>/route.ts): the protocol's paths,
// which the agent's client calls, must each be one of them.

const APP = fileURLToPath(new URL("../../app", import.meta.url));

describe("the control plane's agent API", () => {
  it.each(Object.entries(CONTROL_PLANE_PATHS))(
    "serves %s at the protocol's path",
    (_call, path) => {
      expect(path.startsWith(`${AGENT_API_PREFIX}/`)).toBe(true);
      expect(existsSync(`${APP}${path}/route.ts`), `${APP}${path}/route.ts`).toBe(true);
    },
  );
});
