import { randomBytes } from "node:crypto";
import { API_KEY_SCOPES } from "@thaw/core";
import { pushTinyImage, startTestRegistry, type TestRegistry } from "@thaw/core/testing";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHubStandIn, type HubStandIn } from "../hub-stand-in.ts";
import { startWebServer, type WebServer } from "../web-server.ts";
import { newApiKey, restClient } from "./rest-client.ts";

// Issue 19 as a REST client meets it, through the built server: an endpoint deployed from an
// image reference and a model id alone (sizes, layers, digest and format found by the
// server), the inspection answered before deploying, a private registry reached with the
// org's stored credential, and the refusals named by field.

const PASSWORD = "registry-password-for-e2e";
const WEIGHTS_BYTES = 2_200_000_000;
const HF_TOKEN = "hf_e2eTokenForGatedModels";

describe("deploying from an image reference and a model id", () => {
  let server: WebServer;
  let registry: TestRegistry;
  let privateRegistry: TestRegistry;
  let hub: HubStandIn;
  let api: ReturnType<typeof restClient>;
  let imageRef: string;

  beforeAll(async () => {
    registry = await startTestRegistry();
    privateRegistry = await startTestRegistry({
      basicAuth: {
        username: "puller",
        password: PASSWORD,
        bcryptHash: bcrypt.hashSync(PASSWORD, 5),
      },
    });
    imageRef = await pushTinyImage(registry, "team/tiny", "v1", "import torch\n");
    await pushTinyImage(privateRegistry, "team/secret", "v1");
    hub = await startHubStandIn({
      "TinyLlama/TinyLlama-1.1B-Chat-v1.0": {
        sha: "fe8a4ea1ffedaf415f4da2f062534de366a451e6",
        files: { "model.safetensors": WEIGHTS_BYTES, "config.json": 608 },
      },
      "meta-llama/Llama-3.2-1B-Instruct": {
        sha: "9213176726f574b556790deb65791e0c5aa438b6",
        files: { "model.safetensors": 2_471_645_608, "config.json": 877 },
        gatedToken: HF_TOKEN,
      },
    });
    server = await startWebServer({
      env: {
        THAW_TRUSTED_REGISTRIES: `${registry.host},${privateRegistry.host}`,
        THAW_HF_ENDPOINT: hub.endpoint,
        THAW_CREDENTIALS_KEY: randomBytes(32).toString("base64"),
        THAW_INSPECTION_TIMEOUT_SECONDS: "5",
      },
    });
    const key = await newApiKey(server.database.db, server.orgId, API_KEY_SCOPES, {
      name: "deploy-from-reference",
    });
    api = restClient(server.baseUrl, key);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all([registry?.stop(), privateRegistry?.stop(), hub?.stop()]);
  });

  it("inspects an image and a model before deploying, storing nothing", async () => {
    const answer = await api("POST", "/api/v1/inspections", {
      body: { imageRef, modelSource: "hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0" },
    });
    expect(answer.status, answer.text).toBe(200);
    const { image, model } = answer.json as {
      image: {
        digest: string;
        layers: { bytes: number; compression: string }[];
        imageBytes: number;
      };
      model: { totalBytes: number; format: string; revision: string };
    };
    expect(image.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
    // pushTinyImage's one layer: the text repeated 1,000 times, gzip'd.
    const layerBytes = "import torch\n".length * 1_000;
    expect(image.layers).toEqual([
      expect.objectContaining({ bytes: layerBytes, compression: "gzip-6" }),
    ]);
    expect(image.imageBytes).toBe(layerBytes);
    expect(model).toMatchObject({ totalBytes: WEIGHTS_BYTES, format: "safetensors" });
    expect(await server.database.db.deployment.count({ where: { imageRef } })).toBe(0);
  });

  it("creates an endpoint from the reference and the model id alone", async () => {
    const created = await api("POST", "/api/v1/endpoints", {
      body: {
        slug: "from-reference",
        name: "From a reference",
        gpuType: "L4",
        deployment: {
          imageRef,
          modelSource: "hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0",
          engine: "vllm",
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    const inspected = (
      (await api("POST", "/api/v1/inspections", { body: { imageRef } })).json as {
        image: { digest: string; imageBytes: number };
      }
    ).image;
    const deployment = (created.json as { activeDeployment: Record<string, unknown> })
      .activeDeployment;
    expect(deployment).toMatchObject({
      imageRef,
      imageDigest: inspected.digest,
      imageBytes: inspected.imageBytes,
      modelBytes: WEIGHTS_BYTES,
      modelFormat: "safetensors",
      estargzImageRef: null,
    });
  });

  it("names the field when the registry has no such tag, and keeps what the client gave", async () => {
    const missing = await api("POST", "/api/v1/endpoints", {
      body: {
        slug: "no-such-tag",
        name: "No such tag",
        gpuType: "L4",
        deployment: {
          imageRef: `${registry.host}/team/tiny:v404`,
          modelSource: "hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0",
          engine: "vllm",
        },
      },
    });
    expect(missing.status).toBe(422);
    expect(missing.json).toMatchObject({
      error: { details: { field: "body.deployment.imageRef" } },
    });
    expect((missing.json as { error: { message: string } }).error.message).toMatch(
      /team\/tiny:v404 \(404\)/,
    );
    const unknownModel = await api("POST", "/api/v1/inspections", {
      body: { imageRef, modelSource: "hf://nobody/nothing" },
    });
    expect(unknownModel.status).toBe(422);
    expect(unknownModel.json).toMatchObject({ error: { details: { field: "body.modelSource" } } });
    expect(await server.database.db.endpoint.count({ where: { slug: "no-such-tag" } })).toBe(0);
  });

  it("reaches a private registry with the org's stored credential, never answering it", async () => {
    const ref = `${privateRegistry.host}/team/secret:v1`;
    const before = await api("POST", "/api/v1/inspections", { body: { imageRef: ref } });
    expect(before.status).toBe(422);
    expect(before.text).toMatch(/wants credentials/);
    const saved = await api("PUT", "/api/v1/registry-credentials", {
      body: { kind: "basic", registry: privateRegistry.host, username: "puller", secret: PASSWORD },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.text).not.toContain(PASSWORD);
    const listed = await api("GET", "/api/v1/registry-credentials");
    expect(listed.text).toContain(privateRegistry.host);
    expect(listed.text).not.toContain(PASSWORD);
    const after = await api("POST", "/api/v1/inspections", { body: { imageRef: ref } });
    expect(after.status, after.text).toBe(200);
    const deleted = await api(
      "DELETE",
      `/api/v1/registry-credentials/${encodeURIComponent(privateRegistry.host)}`,
    );
    expect(deleted.status, deleted.text).toBe(200);
    expect(server.logs.join("\n")).not.toContain(PASSWORD);
  });

  it("sizes a gated model with the org's Hugging Face token, and says what to do without it", async () => {
    const gated = { imageRef, modelSource: "hf://meta-llama/Llama-3.2-1B-Instruct" };
    const without = await api("POST", "/api/v1/inspections", { body: gated });
    expect(without.status).toBe(422);
    expect(without.json).toMatchObject({ error: { details: { field: "body.modelSource" } } });
    expect(without.text).toMatch(
      /gated model: accept its terms on the Hub and add a Hugging Face token/,
    );
    const saved = await api("PUT", "/api/v1/registry-credentials", {
      body: { kind: "huggingface", secret: HF_TOKEN },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.json).toMatchObject({ registry: "huggingface.co", kind: "huggingface" });
    expect(saved.text).not.toContain(HF_TOKEN);
    const sized = await api("POST", "/api/v1/inspections", { body: gated });
    expect(sized.status, sized.text).toBe(200);
    expect(sized.json).toMatchObject({
      model: { totalBytes: 2_471_645_608, format: "safetensors" },
    });
    expect(server.logs.join("\n")).not.toContain(HF_TOKEN);
  });
});
