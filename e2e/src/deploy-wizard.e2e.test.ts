import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ESTARGZ_TOC_DIGEST } from "@thaw/core/images";
import { pushTinyImage, startTestRegistry, type TestRegistry } from "@thaw/core/testing";
import { DEMO_ENDPOINTS, DEMO_USER } from "@thaw/db/seed";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { startHubStandIn, type HubStandIn } from "./hub-stand-in.ts";
import { startWebServer, type WebServer } from "./web-server.ts";

// The deploy wizard in Chromium against the built server: each step checked with core's
// schemas (a rule over the step's own fields shows on that step, with focus on the field),
// an error the server finds put back on the field it names, and a roll to a new deployment.

const SLUG = "wizard-tinyllama";
const screenshots = join(import.meta.dirname, "..", "screenshots");

describe("deploy wizard", () => {
  let server: WebServer;
  let registry: TestRegistry;
  let hub: HubStandIn;
  let browser: Browser;
  let page: Page;
  const focusedId = () => page.evaluate(() => document.activeElement?.id ?? null);
  const stepTitle = () => page.getByTestId("wizard-step-title").textContent();
  const field = (label: string) => page.getByLabel(label, { exact: true });
  const next = () => page.getByTestId("wizard-next").click();

  beforeAll(async () => {
    registry = await startTestRegistry();
    hub = await startHubStandIn({
      "Qwen/Qwen2.5-0.5B-Instruct": {
        sha: "7ae557604adf67be50417f59c2c2f167def9a775",
        files: { "model.safetensors": 988_097_824, "config.json": 659 },
      },
    });
    server = await startWebServer({
      env: { THAW_TRUSTED_REGISTRIES: registry.host, THAW_HF_ENDPOINT: hub.endpoint },
    });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`${server.baseUrl}/sign-in`);
    await page.getByLabel("Email").fill(DEMO_USER.email);
    await page.getByLabel("Password").fill(DEMO_USER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("endpoints-table").waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await Promise.all([registry?.stop(), hub?.stop()]);
  });

  it("checks each step, puts the server's refusal on its field, and creates the endpoint", async () => {
    await page.goto(`${server.baseUrl}/endpoints/new`);
    await page.getByTestId("deploy-wizard").waitFor();
    await field("Image reference").fill("registry.demo.thaw.dev/e2e/tinyllama:1");
    await field("Image size in GB (optional override)").fill("1.6");
    await next();
    await field("Model source").fill("hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0");
    await field("Model size in GB (optional override)").fill("2.2");
    await field("Model format (optional)").fill("safetensors");
    await next();

    // A taken slug passes the schema; min above max does not, and is named on its field.
    await field("Endpoint slug").fill(DEMO_ENDPOINTS[0]!.slug);
    await field("Display name").fill("Wizard TinyLlama");
    await field("GPU type").fill("A10G");
    await field("Minimum replicas").fill("3");
    await next();
    await expect.poll(focusedId).toBe("deploy-minReplicas");
    expect(await page.getByTestId("deploy-minReplicas-error").textContent()).toBe(
      "minReplicas (3) is above maxReplicas (1)",
    );
    await field("Minimum replicas").fill("0");
    await field("Maximum replicas").fill("2");
    await next();

    // No start path at all is refused on the paths step.
    for (const path of ["warm", "wake", "restore", "peer", "lazy"])
      await page.getByTestId(`deploy-path-${path}`).uncheck();
    await page.getByTestId("deploy-path-pull").uncheck();
    await next();
    await expect.poll(focusedId).toBe("deploy-allowedPaths");
    await page.getByTestId("deploy-path-pull").check();
    await next();
    const review = await page.getByTestId("deploy-review").innerText();
    expect(review).toContain("min 0, desired 0, max 2");
    expect(review).toContain("Start paths\npull");
    expect(review).toContain("1.6 GB");

    // The server refuses the taken slug: the wizard goes back to its step and focuses it.
    await page.getByTestId("deploy-submit").click();
    await expect.poll(focusedId).toBe("deploy-slug");
    expect(await stepTitle()).toBe("GPU and scaling");
    expect(await page.getByTestId("deploy-slug-error").textContent()).toBe(
      `an endpoint '${DEMO_ENDPOINTS[0]!.slug}' already exists.`,
    );
    await field("Endpoint slug").fill(SLUG);
    await next();
    await next();
    await page.getByTestId("deploy-submit").click();
    await page.waitForURL(new RegExp(`/endpoints/${SLUG}$`), { timeout: 20_000 });

    const stored = await server.database.db.endpoint.findFirstOrThrow({
      where: { slug: SLUG },
      include: { deployments: true },
    });
    expect(stored).toMatchObject({
      name: "Wizard TinyLlama",
      minReplicas: 0,
      desiredReplicas: 0,
      maxReplicas: 2,
      allowedPaths: ["pull"],
      gpuSecondsPerWaitSecond: null,
    });
    expect(stored.deployments).toHaveLength(1);
    expect(stored.deployments[0]).toMatchObject({
      imageBytes: 1_600_000_000n,
      modelBytes: 2_200_000_000n,
      modelFormat: "safetensors",
      engine: "vllm",
    });
  });

  it("rolls to a new deployment, with the eStargz rule checked on the image step", async () => {
    await page.goto(`${server.baseUrl}/endpoints/${SLUG}/deploy`);
    await page.getByTestId("deploy-wizard").waitFor();
    await field("Image reference").fill("registry.demo.thaw.dev/e2e/tinyllama:2");
    await field("Image size in GB (optional override)").fill("1.7");
    await field("eStargz digest (optional)").fill(`sha256:${"a".repeat(64)}`);
    await next();
    await expect.poll(focusedId).toBe("deploy-deployment-estargzDigest");
    expect(await page.getByTestId("deploy-deployment-estargzDigest-error").textContent()).toBe(
      "an eStargz digest needs estargzImageRef",
    );
    await field("eStargz image reference (optional)").fill(
      "registry.demo.thaw.dev/e2e/tinyllama:2-esgz",
    );
    await next();
    await field("Model source").fill("hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0");
    await field("Model size in GB (optional override)").fill("2.2");
    await field("Model format (optional)").fill("safetensors");
    await next();
    expect(await page.getByTestId("deploy-review").innerText()).toContain(
      "eStargz\nregistry.demo.thaw.dev/e2e/tinyllama:2-esgz",
    );
    await page.getByTestId("deploy-submit").click();
    await page.waitForURL(new RegExp(`/endpoints/${SLUG}$`), { timeout: 20_000 });

    const versions = await server.database.db.deployment.findMany({
      where: { endpoint: { slug: SLUG } },
      orderBy: { version: "asc" },
      select: { version: true, status: true, estargzImageRef: true, estargzDigest: true },
    });
    expect(versions).toEqual([
      { version: 1, status: "superseded", estargzImageRef: null, estargzDigest: null },
      {
        version: 2,
        status: "active",
        estargzImageRef: "registry.demo.thaw.dev/e2e/tinyllama:2-esgz",
        estargzDigest: `sha256:${"a".repeat(64)}`,
      },
    ]);
  });

  it("deploys from an image reference and a model id alone, showing what the registry said", async () => {
    const imageRef = await pushTinyImage(registry, "team/qwen", "v1", "import vllm\n");
    // Its eStargz variant: the same layer, marked with the TOC digest stargz-snapshotter needs.
    const manifest = (await (
      await fetch(`http://${registry.host}/v2/team/qwen/manifests/v1`, {
        headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
      })
    ).json()) as { layers: Record<string, unknown>[] };
    const toc = `sha256:${"c".repeat(64)}`;
    await registry.pushManifest(
      "team/qwen",
      "v1-esgz",
      "application/vnd.oci.image.manifest.v1+json",
      {
        ...manifest,
        layers: manifest.layers.map((l) => ({ ...l, annotations: { [ESTARGZ_TOC_DIGEST]: toc } })),
      },
    );

    await page.goto(`${server.baseUrl}/endpoints/new`);
    await page.getByTestId("deploy-wizard").waitFor();
    await field("Image reference").fill(imageRef);
    await next();
    await field("Model source").fill("hf://Qwen/Qwen2.5-0.5B-Instruct");
    await next();
    await field("Endpoint slug").fill("wizard-from-reference");
    await field("Display name").fill("Qwen from a reference");
    await field("GPU type").fill("A10G");
    await next();
    await next();
    const found = page.getByTestId("deploy-inspection");
    await found.waitFor({ timeout: 20_000 });
    const text = await found.innerText();
    expect(text).toContain("Found in the registry and the model source");
    expect(text).toMatch(/Layers\n1 \(1 gzip-6\)/);
    expect(text).toContain(`${registry.host}/team/qwen:v1-esgz`);
    expect(text).toMatch(/Model files\n1 safetensors, 988\.1 MB at 7ae5576/);
    expect(await page.getByTestId("deploy-review").innerText()).toContain("988.1 MB, safetensors");
    mkdirSync(screenshots, { recursive: true });
    await page
      .getByTestId("deploy-wizard")
      .screenshot({ path: join(screenshots, "deploy-wizard-inspection.png") });

    await page.getByTestId("deploy-submit").click();
    await page.waitForURL(/\/endpoints\/wizard-from-reference$/, { timeout: 20_000 });
    const stored = await server.database.db.deployment.findFirstOrThrow({
      where: { endpoint: { slug: "wizard-from-reference" } },
    });
    expect(stored).toMatchObject({
      imageRef,
      imageBytes: BigInt("import vllm\n".length * 1_000),
      estargzImageRef: `${registry.host}/team/qwen:v1-esgz`,
      modelBytes: 988_097_824n,
      modelFormat: "safetensors",
    });
  });
});
