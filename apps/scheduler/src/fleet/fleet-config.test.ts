import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { encodeUserData } from "./aws/run-instances-input.ts";
import { AwsHostProvider } from "./aws/aws-host-provider.ts";
import { FleetConfigError, loadFleetSetup } from "./fleet-config.ts";
import { renderUserData } from "./gpu-host-user-data.ts";
import { SimHostProvider } from "./sim-host-provider.ts";

const write = (json: unknown) => {
  const file = join(mkdtempSync(join(tmpdir(), "thaw-fleet-config-")), "fleet.json");
  writeFileSync(file, typeof json === "string" ? json : JSON.stringify(json));
  return file;
};
const offerings = [{ instanceType: "g6e.xlarge", zone: "us-east-1a", priceUsdPerHour: 1.861 }];
const aws = {
  controlPlaneUrl: "https://thaw.example.com",
  agentBundle: { url: "https://artifacts.example.com/thaw-agent.tgz", sha256: "a".repeat(64) },
  toolChecksums: {
    stargzSnapshotter: "b".repeat(64),
    nodejs: "c".repeat(64),
    cudaCheckpoint: "d".repeat(64),
  },
  ec2: { region: "us-east-1", clusterName: "prod", imageId: "ami-0123456789abcdef0" },
};

describe("loadFleetSetup", () => {
  it("builds the aws provider with the repo's GPU host template, whose user-data fits EC2's limit", () => {
    const setup = loadFleetSetup(write({ provider: "aws", offerings, aws }), {});
    expect(setup.provider).toBeInstanceOf(AwsHostProvider);
    expect(setup.policy.offerings[0]).toMatchObject({ gpuModel: "L40S", gpusPerHost: 1 });
    // What a launch would send, rendered from infra/cloud-init/gpu-host.yaml.
    const userData = (
      setup.provider as unknown as {
        options: { userData: (o: object) => string };
      }
    ).options.userData({
      nodeId: "0190a0a0-0000-7000-8000-000000000001",
      joinToken: "thawjoin_abc",
      offering: setup.policy.offerings[0],
    });
    expect(userData).toMatch(/^#cloud-config/);
    expect(userData).toContain("thawjoin_abc");
    expect(userData).toContain("https://thaw.example.com");
    expect(userData).not.toMatch(/\$\{THAW_/);
    // Every download the bootstrap makes is held to the operator's pinned SHA-256.
    expect(userData).toContain(`STARGZ_SHA256=${"b".repeat(64)}\n`);
    expect(userData).toContain(`NODE_SHA256=${"c".repeat(64)}\n`);
    expect(userData).toContain(`CUDA_CHECKPOINT_SHA256=${"d".repeat(64)}\n`);
    const encoded = encodeUserData(userData);
    expect(Buffer.from(encoded, "base64").length).toBeLessThanOrEqual(16 * 1024);
    expect(gunzipSync(Buffer.from(encoded, "base64")).toString("utf8")).toBe(userData);
  });

  it("builds the sim provider, and asks for the sim cloud's token", () => {
    const sim = { cloudUrl: "https://127.0.0.1:7070", cloudCertSha256: "c".repeat(64) };
    const file = write({ provider: "sim", offerings, sim });
    expect(loadFleetSetup(file, { THAW_SIM_CLOUD_TOKEN: "x".repeat(16) }).provider).toBeInstanceOf(
      SimHostProvider,
    );
    expect(() => loadFleetSetup(file, {})).toThrow(/THAW_SIM_CLOUD_TOKEN: is not set/);
    // Its hosts get the volume the aws provider would provision, unless told otherwise.
    const setup = loadFleetSetup(file, { THAW_SIM_CLOUD_TOKEN: "x".repeat(16) });
    expect((setup.provider as SimHostProvider)["options"].dataVolume).toEqual({
      throughputMiBps: 1_000,
      iops: 16_000,
    });
    const defaultDisk = write({ provider: "sim", offerings, sim: { ...sim, dataVolume: null } });
    expect(
      (
        loadFleetSetup(defaultDisk, { THAW_SIM_CLOUD_TOKEN: "x".repeat(16) })
          .provider as SimHostProvider
      )["options"].dataVolume,
    ).toBeUndefined();
    // The sim cloud is the sim agent's: https, pinned to its certificate, like any agent.
    const plain = write({ provider: "sim", offerings, sim: { cloudUrl: "http://127.0.0.1:7070" } });
    expect(() => loadFleetSetup(plain, { THAW_SIM_CLOUD_TOKEN: "x".repeat(16) })).toThrow(
      /sim\.cloudUrl: expected the sim agent's https:\/\/ URL[\s\S]*sim\.cloudCertSha256: /,
    );
  });

  it("names each bad field, with the file", () => {
    const file = write({
      provider: "aws",
      offerings,
      aws: { ...aws, agentBundle: { url: "ftp://x", sha256: "nope" } },
    });
    const error = (() => {
      try {
        loadFleetSetup(file, {});
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(FleetConfigError);
    expect(error?.message).toContain(file);
    expect(error?.message).toMatch(/aws\.agentBundle\.url: /);
    expect(error?.message).toMatch(/aws\.agentBundle\.sha256: a hex SHA-256/);
    expect(() => loadFleetSetup(write("{not json"), {})).toThrow(FleetConfigError);
  });
});

describe("renderUserData", () => {
  it("refuses a template placeholder it has no value for", () => {
    expect(() => renderUserData("a: ${THAW_X}\nb: ${THAW_Y}", { THAW_X: "1" })).toThrow(
      "user-data template needs values for THAW_Y",
    );
  });

  it("refuses values that could break out of the YAML", () => {
    expect(() =>
      renderUserData("t: ${THAW_JOIN_TOKEN}", { THAW_JOIN_TOKEN: "a\nruncmd: [x]" }),
    ).toThrow(/printable ASCII/);
    expect(() => renderUserData("t: '${THAW_JOIN_TOKEN}'", { THAW_JOIN_TOKEN: "a'b" })).toThrow(
      /quotes/,
    );
  });
});

describe("tool checksums (issue 23)", () => {
  it("refuses a fleet without a pinned SHA-256 for every tool the hosts download", () => {
    for (const tool of ["stargzSnapshotter", "nodejs", "cudaCheckpoint"] as const) {
      const { [tool]: _left, ...rest } = aws.toolChecksums;
      expect(() =>
        loadFleetSetup(
          write({ provider: "aws", offerings, aws: { ...aws, toolChecksums: rest } }),
          {},
        ),
      ).toThrow(new RegExp(`aws\\.toolChecksums\\.${tool}: `));
      expect(() =>
        loadFleetSetup(
          write({
            provider: "aws",
            offerings,
            aws: { ...aws, toolChecksums: { ...rest, [tool]: "latest" } },
          }),
          {},
        ),
      ).toThrow(new RegExp(`aws\\.toolChecksums\\.${tool}: a hex SHA-256`));
    }
    const { toolChecksums: _none, ...without } = aws;
    expect(() => loadFleetSetup(write({ provider: "aws", offerings, aws: without }), {})).toThrow(
      /aws\.toolChecksums: /,
    );
  });

  it("render.mjs --fill refuses user-data without them, or with something else in their place", () => {
    const root = fileURLToPath(new URL("../../../../", import.meta.url));
    const fill = (extra: Record<string, string>) =>
      spawnSync(process.execPath, ["infra/cloud-init/render.mjs", "--fill", "--gzip"], {
        cwd: root,
        encoding: "utf8",
        env: {
          PATH: process.env.PATH,
          THAW_CONTROL_PLANE_URL: "https://thaw.example.com",
          THAW_JOIN_TOKEN: "thawjoin_abc",
          THAW_AGENT_BUNDLE_URL: "https://artifacts.example.com/thaw-agent.tgz",
          THAW_AGENT_BUNDLE_SHA256: "a".repeat(64),
          ...extra,
        },
      });
    const sums = {
      THAW_STARGZ_SHA256: "b".repeat(64),
      THAW_NODE_SHA256: "c".repeat(64),
      THAW_CUDA_CHECKPOINT_SHA256: "d".repeat(64),
    };
    expect(fill(sums).status).toBe(0);
    const missing = fill({ ...sums, THAW_NODE_SHA256: "" });
    expect([missing.status, missing.stderr]).toEqual([1, "render: THAW_NODE_SHA256 is not set\n"]);
    const bad = fill({ ...sums, THAW_CUDA_CHECKPOINT_SHA256: "skip" });
    expect(bad.stderr).toBe(
      "render: THAW_CUDA_CHECKPOINT_SHA256 must be a SHA-256 (64 lower-case hex digits)\n",
    );
  });
});

describe("infra/cloud-init/gpu-host.yaml", () => {
  it("is up to date with its sources (render.mjs --check)", () => {
    const root = fileURLToPath(new URL("../../../../", import.meta.url));
    const result = spawnSync(process.execPath, ["infra/cloud-init/render.mjs", "--check"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(result.stderr + result.stdout).toContain("up to date");
    expect(result.status).toBe(0);
  });
});
