import { describe, expect, it } from "vitest";
import { AGENT_ROUTES, type AgentRouteName, agentPath, matchAgentPath } from "./agent-api.ts";

const ROUTES = Object.keys(AGENT_ROUTES) as AgentRouteName[];
const REPLICA = "0b7d4a6e-3f7e-4f43-9d59-6f2f7d0e4a11";

describe("the agent API's routes: one table for the agent and its client", () => {
  it("fills a route's parameters as single path segments", () => {
    expect(agentPath("startReplica")).toBe("/v1/replicas");
    expect(agentPath("parkReplica", { id: REPLICA })).toBe(`/v1/replicas/${REPLICA}/park`);
    expect(agentPath("stopReplica", { id: "a/b c" })).toBe("/v1/replicas/a%2Fb%20c");
    expect(() => agentPath("stopReplica")).toThrow(/\{id\}/);
  });

  it("matches what the client sends to that route and no other", () => {
    for (const route of ROUTES) {
      const sent = agentPath(route, { id: REPLICA });
      const matching = ROUTES.filter((other) => matchAgentPath(other, sent) !== null);
      expect(matching, sent).toEqual([route]);
    }
    expect(matchAgentPath("parkReplica", `/v1/replicas/${REPLICA}/park`)).toEqual([REPLICA]);
    expect(matchAgentPath("stopReplica", "/v1/replicas/a%2Fb")).toEqual(["a%2Fb"]);
  });

  it("takes no extra, missing or empty segment", () => {
    for (const path of [
      "/v1/replicas/",
      "/v1/replicas//park",
      "/v1/replicas/x/park/",
      "/v1/replicas/x/y",
      "/v1",
      "v1/replicas",
      "/hosts/a/v1/replicas",
    ])
      expect(
        ROUTES.filter((route) => matchAgentPath(route, path) !== null),
        path,
      ).toEqual([]);
  });
});
