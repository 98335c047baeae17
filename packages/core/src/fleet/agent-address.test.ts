import { describe, expect, it } from "vitest";
import { agentUrlProblem, classifyAgentFailure, parseCidrList } from "./agent-address.ts";

const fromSource = (url: string, sourceAddress = "10.0.1.7") =>
  agentUrlProblem(url, { agentCidrs: [], sourceAddress });
const inCidrs = (url: string) =>
  agentUrlProblem(url, { agentCidrs: parseCidrList("10.0.0.0/16, fd12::/16") });

describe("agent addresses", () => {
  it("takes an IP and port, with the sim agent's host prefix at most", () => {
    expect(fromSource("http://10.0.1.7:7070")).toBeNull();
    expect(fromSource("https://10.0.1.7:7443/")).toBeNull();
    expect(fromSource("http://10.0.1.7:7070/hosts/sim-g5-1")).toBeNull();
    expect(inCidrs("http://[fd12::9]:7070")).toBeNull();
  });

  it("refuses what the review's probes joined with", () => {
    for (const url of [
      "http://127.0.0.1:7499/admin/purge-cache?target=all&x=",
      "file:///etc/passwd",
      "http://169.254.169.254/latest/meta-data/",
      "http://169.254.169.254:80/",
      "http://[::1]:6379/",
      "http://[fe80::1]:7070",
      "http://[fd00:ec2::254]:80",
      "http://0.0.0.0:7070",
      "http://agent.internal:7070",
      "http://user:pw@10.0.1.7:7070",
      "http://10.0.1.7:7070/v1/../admin",
      "http://10.0.1.7",
      "gopher://10.0.1.7:70",
    ])
      expect(fromSource(url, "127.0.0.1"), url).not.toBeNull();
  });

  it("dials only the join's own address, or inside the operator's agent networks", () => {
    expect(fromSource("http://10.0.9.9:7070")).toMatch(/not the address this join came from/);
    expect(fromSource("http://[::ffff:10.0.1.7]:7070")).toBeNull();
    expect(inCidrs("http://10.0.200.1:7070")).toBeNull();
    expect(inCidrs("http://10.1.0.1:7070")).toMatch(/outside the agent networks/);
    // Link-local stays refused even inside a configured range.
    expect(
      agentUrlProblem("http://169.254.0.5:7070", { agentCidrs: parseCidrList("169.254.0.0/16") }),
    ).toMatch(/linkLocal/);
  });
});

describe("agent failures as a tenant reads them", () => {
  it("names a class and the protocol code, never the far end's text", () => {
    expect(classifyAgentFailure({ status: 0, code: "unreachable" })).toBe(
      "agent_unreachable: the node's agent did not answer",
    );
    expect(classifyAgentFailure({ status: 409, code: "gpu_busy" })).toBe(
      "agent_refused (gpu_busy): the node's agent refused this start",
    );
    expect(classifyAgentFailure({ status: 500, code: "<html>secret</html>" })).toBe(
      "agent_error (unknown): the node's agent failed",
    );
  });
});
