import { describe, expect, it } from "vitest";
import { loadEnv, parseSimHosts, splitListenAddress } from "./env.ts";

describe("agent env", () => {
  it("parses the sim fleet spec", () => {
    expect(parseSimHosts("g5.xlarge:2,p5.48xlarge:1")).toEqual([
      { instanceType: "g5.xlarge", count: 2 },
      { instanceType: "p5.48xlarge", count: 1 },
    ]);
  });

  it("takes a sim host group's data volume, and the disk probe's switch", () => {
    expect(parseSimHosts("g6e.xlarge:1:1000,g6e.xlarge:1")).toEqual([
      { instanceType: "g6e.xlarge", count: 1, volumeMiBps: 1000 },
      { instanceType: "g6e.xlarge", count: 1 },
    ]);
    expect(loadEnv({}).diskProbe).toEqual({ mode: "on", mib: 256 });
    expect(
      loadEnv({
        THAW_AGENT_DISK_PROBE: "off",
        THAW_AGENT_DISK_PROBE_DIR: "/var/lib/containerd",
        THAW_AGENT_DISK_PROBE_MIB: "64",
      }).diskProbe,
    ).toEqual({ mode: "off", dir: "/var/lib/containerd", mib: 64 });
    expect(() => loadEnv({ THAW_AGENT_DISK_PROBE: "maybe" })).toThrow(
      /THAW_AGENT_DISK_PROBE: expected 'on' or 'off'/,
    );
  });

  it("names the malformed variable", () => {
    expect(() => loadEnv({ THAW_SIM_HOSTS: "g5.xlarge" })).toThrow(
      /THAW_SIM_HOSTS: expected '<instance-type>:<count>/,
    );
    expect(() => loadEnv({ THAW_CONTROL_PLANE_URL: "not a url" })).toThrow(
      /THAW_CONTROL_PLANE_URL/,
    );
    expect(() => loadEnv({ THAW_AGENT_RUNTIME: "docker" })).toThrow(
      /THAW_AGENT_RUNTIME: expected 'sim' .* or 'containerd'/,
    );
  });

  it("takes an https advertise URL, a metrics token and a pinned scheduler key, naming bad ones", () => {
    const publicKey = "MCowBQYDK2VwAyEAnXcAANsPB7C8cJmzrTEiFiW5aPEgySmtDHtbmwfmUfY=";
    expect(
      loadEnv({
        THAW_AGENT_ADVERTISE_URL: "https://10.0.3.7:7070",
        THAW_AGENT_METRICS_TOKEN: "m".repeat(16),
        THAW_AGENT_CALL_PUBLIC_KEY: publicKey,
      }),
    ).toMatchObject({
      advertiseUrl: "https://10.0.3.7:7070",
      metricsToken: "m".repeat(16),
      agentCallPublicKey: publicKey,
    });
    expect(() => loadEnv({ THAW_AGENT_ADVERTISE_URL: "http://10.0.3.7:7070" })).toThrow(
      /THAW_AGENT_ADVERTISE_URL: expected an https:\/\/ URL/,
    );
    expect(() => loadEnv({ THAW_AGENT_METRICS_TOKEN: "short" })).toThrow(
      /THAW_AGENT_METRICS_TOKEN: at least 16 characters/,
    );
    expect(() => loadEnv({ THAW_AGENT_CALL_PUBLIC_KEY: "not-a-key" })).toThrow(
      /THAW_AGENT_CALL_PUBLIC_KEY: must be the Ed25519 public key/,
    );
  });

  it("configures a containerd host, naming bad values", () => {
    expect(
      loadEnv({
        THAW_AGENT_RUNTIME: "containerd",
        THAW_AGENT_HOST_NAME: "gpu-7",
        THAW_CONTAINERD_PLAIN_HTTP_REGISTRIES: "127.0.0.1:5000,registry.local",
      }),
    ).toMatchObject({
      runtime: "containerd",
      host: { name: "gpu-7", instanceType: "g5.xlarge", provider: "aws" },
      containerd: {
        address: "/run/containerd/containerd.sock",
        namespace: "thaw",
        plainHttpRegistries: "127.0.0.1:5000,registry.local",
        stargzSnapshotter: "stargz",
      },
    });
    expect(() =>
      loadEnv({ THAW_AGENT_HOST_NAME: "gpu 7", THAW_CONTAINERD_PLAIN_HTTP_REGISTRIES: "a b" }),
    ).toThrow(/THAW_AGENT_HOST_NAME: letters[\s\S]*THAW_CONTAINERD_PLAIN_HTTP_REGISTRIES/);
  });

  it("has defaults that start a local demo fleet", () => {
    expect(loadEnv({})).toMatchObject({
      controlPlaneUrl: "http://localhost:3000",
      listen: "127.0.0.1:7070",
      listenConfigured: false,
      sim: { hosts: "g5.xlarge:2,g6e.xlarge:2", timeFactor: 1, estargz: true },
      telemetry: { flushIntervalMs: 250 },
    });
  });

  it("reads a JSON config file, with the environment winning", () => {
    const file = JSON.stringify({
      listen: "0.0.0.0:7171",
      sim: { timeFactor: 20, restoreFailureProbability: 0.1 },
      telemetry: { retryMaxMs: 10_000 },
    });
    const config = loadEnv(
      { THAW_AGENT_CONFIG: "/etc/thaw/agent.json", THAW_SIM_TIME_FACTOR: "50" },
      () => file,
    );
    expect(config).toMatchObject({
      listen: "0.0.0.0:7171",
      listenConfigured: true,
      sim: { timeFactor: 50, restoreFailureProbability: 0.1 },
      telemetry: { retryMaxMs: 10_000 },
    });
  });

  it("names the file's field, or the unknown key, when the file is wrong", () => {
    const read = (json: unknown) => () => JSON.stringify(json);
    expect(() =>
      loadEnv({ THAW_AGENT_CONFIG: "a.json" }, read({ sim: { timeFactor: 0.5 } })),
    ).toThrow(/sim\.timeFactor \(in a\.json\): .*>=1/);
    expect(() =>
      loadEnv({ THAW_AGENT_CONFIG: "a.json" }, read({ sim: { timefactor: 2 } })),
    ).toThrow(/sim\.timefactor \(in a\.json\): unknown setting/);
    expect(() => loadEnv({ THAW_AGENT_CONFIG: "a.json" }, () => "{ nope")).toThrow(
      /THAW_AGENT_CONFIG: a\.json is not valid JSON/,
    );
    expect(() =>
      loadEnv({ THAW_AGENT_CONFIG: "missing.json" }, () => {
        throw Object.assign(new Error("nope"), { code: "ENOENT" });
      }),
    ).toThrow(/THAW_AGENT_CONFIG: cannot read missing\.json: ENOENT/);
  });

  it("names bad numbers, probabilities and listen addresses", () => {
    expect(() => loadEnv({ THAW_SIM_TIME_FACTOR: "fast" })).toThrow(/THAW_SIM_TIME_FACTOR: /);
    expect(() => loadEnv({ THAW_SIM_RESTORE_FAILURE_PROBABILITY: "1.5" })).toThrow(
      /THAW_SIM_RESTORE_FAILURE_PROBABILITY: /,
    );
    expect(() => loadEnv({ THAW_AGENT_LISTEN: "7070" })).toThrow(
      /THAW_AGENT_LISTEN: expected '<host>:<port>'/,
    );
    expect(() => loadEnv({ THAW_SIM_ESTARGZ: "maybe" })).toThrow(/THAW_SIM_ESTARGZ: /);
  });

  it("splits listen addresses", () => {
    expect(splitListenAddress("127.0.0.1:7070")).toEqual({ host: "127.0.0.1", port: 7070 });
    expect(splitListenAddress("[::1]:0")).toEqual({ host: "::1", port: 0 });
  });
});
