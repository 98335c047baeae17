import { AGENT_ERRORS } from "@thaw/protocol";
import { describe, expect, it } from "vitest";
import {
  agentUrlProblem,
  classifyAgentFailure,
  parseCidrList,
  protocolRefusal,
} from "./agent-address.ts";

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
      "http://[fd00:ec2::254]:8080",
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
    // So do the metadata services outside link-local, whatever the operator's ranges.
    const everywhere = { agentCidrs: parseCidrList("0.0.0.0/0, ::/0") };
    for (const url of [
      "http://[fd00:ec2::254]:8080",
      "http://100.100.100.200:8080",
      "http://192.0.0.192:8080",
      "http://[::ffff:169.254.169.254]:8080",
    ])
      expect(agentUrlProblem(url, everywhere), url).toMatch(/metadata/);
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

  it("shows only the protocol's own codes: a code the far end chose reads 'unknown'", () => {
    // What an internal service at the node's address answered (issue 23, finding 4).
    expect(classifyAgentFailure({ status: 400, code: "cache_purged" })).toBe(
      "agent_refused (unknown): the node's agent refused this start",
    );
    expect(classifyAgentFailure({ status: 404, code: "http_404" })).toBe(
      "agent_refused (unknown): the node's agent refused this start",
    );
    expect(classifyAgentFailure({ status: 307, code: "http_307" })).toBe(
      "agent_error (unknown): the node's agent failed",
    );
    expect(classifyAgentFailure({ status: 503, code: "shutting_down" }, "park")).toBe(
      "agent_error (shutting_down): the node's agent failed",
    );
    expect(classifyAgentFailure({ status: 409, code: "path_unsupported" }, "capture")).toBe(
      "agent_refused (path_unsupported): the node's agent refused this capture",
    );
  });

  it("reads every code of the protocol's table by name, answered with its status", () => {
    for (const [code, status] of Object.entries(AGENT_ERRORS)) {
      const kind = status < 500 ? "agent_refused" : "agent_error";
      expect(classifyAgentFailure({ status, code }), code).toMatch(
        new RegExp(`^${kind} \\(${code}\\): `),
      );
    }
  });

  it("names a refused image reference image_refused", () => {
    expect(
      classifyAgentFailure({
        status: 400,
        code: "invalid_request",
        field: "deployment.imageRef",
      }),
    ).toBe("image_refused: the node's agent refused the image reference of this start");
    expect(
      protocolRefusal({ path: ["deployment", "imageRef"], message: "expected an image reference" }),
    ).toBe("image_refused: deployment.imageRef: expected an image reference");
    expect(protocolRefusal({ path: ["gpus"], message: "a GPU index appears twice" })).toBe(
      "request_refused: gpus: a GPU index appears twice",
    );
  });
});
