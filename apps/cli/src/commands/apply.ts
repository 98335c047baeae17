import { readFileSync } from "node:fs";
import {
  CreateEndpointInput,
  isAppError,
  parseImageReference,
  parseInput,
  trustRegistries,
} from "@thaw/core";
import { parse as parseYaml } from "yaml";
import { unwrap, type Api } from "../api.ts";
import { planApply, PlanError, renderDiff, type EndpointFile } from "../apply/plan-apply.ts";
import { CliError } from "../errors.ts";
import { emit } from "../output.ts";
import { apiContext, type GlobalOptions } from "./context.ts";

/** Reads and checks an endpoint file (YAML or JSON) with the API's own schema. */
export function readEndpointFile(path: string): EndpointFile {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, "utf8"));
  } catch (error) {
    throw new CliError(`${path}: ${(error as Error).message}`);
  }
  // Which private registries are allowed is the server's to say (its THAW_TRUSTED_REGISTRIES):
  // the file's registries are left to it, every other rule is checked here.
  trustRegistries(registriesOf(raw));
  try {
    parseInput(CreateEndpointInput, raw, "file");
  } catch (error) {
    if (isAppError(error)) throw new CliError(`${path}: ${error.message}`, error.details?.field);
    throw error;
  }
  // The file as written (not with defaults filled in): only what it sets is compared.
  return raw as EndpointFile;
}

/** The registries a file's deployment names (image and eStargz variant). */
function registriesOf(raw: unknown): string[] {
  const deployment = (raw as { deployment?: Record<string, unknown> } | null)?.deployment;
  return [deployment?.imageRef, deployment?.estargzImageRef]
    .map((ref) => (typeof ref === "string" ? parseImageReference(ref)?.registry : undefined))
    .filter((registry): registry is string => registry !== undefined);
}

async function currentEndpoint(api: Api, url: string, slug: string) {
  const { data, response } = await api
    .GET("/api/v1/endpoints/{endpoint}", { params: { path: { endpoint: slug } } })
    .catch(() => ({ data: undefined, response: undefined }));
  if (response?.status === 404) return null;
  if (data) return data;
  // Anything else (no key, no network): let unwrap say it.
  return unwrap(
    api.GET("/api/v1/endpoints/{endpoint}", { params: { path: { endpoint: slug } } }),
    url,
  );
}

export async function apply(
  options: GlobalOptions & { file: string; dryRun?: boolean },
): Promise<void> {
  const file = readEndpointFile(options.file);
  const { api, target, json } = apiContext(options);
  const current = await currentEndpoint(api, target.url, file.slug);
  let plan;
  try {
    plan = planApply(file, current);
  } catch (error) {
    if (error instanceof PlanError) throw new CliError(error.message, `file.${error.field}`);
    throw error;
  }
  const changes = plan.action === "create" || plan.patch !== null || plan.roll !== null;
  if (!json) process.stdout.write(`${renderDiff(file.slug, plan)}\n`);
  if (!changes || options.dryRun) {
    if (json)
      emit(
        true,
        { slug: file.slug, applied: false, dryRun: options.dryRun ?? false, diff: plan.diff },
        () => "",
      );
    else if (options.dryRun && changes) process.stdout.write("(dry run: nothing was changed)\n");
    return;
  }
  const done: string[] = [];
  if (plan.action === "create") {
    const created = await unwrap(api.POST("/api/v1/endpoints", { body: plan.body }), target.url);
    done.push(`created ${created.slug} with deployment v${created.activeDeployment?.version ?? 1}`);
  } else {
    if (plan.patch) {
      await unwrap(
        api.PATCH("/api/v1/endpoints/{endpoint}", {
          params: { path: { endpoint: file.slug } },
          body: plan.patch,
        }),
        target.url,
      );
      done.push(`updated ${Object.keys(plan.patch).join(", ")}`);
    }
    if (plan.roll) {
      const rolled = await unwrap(
        api.POST("/api/v1/endpoints/{endpoint}/deployments", {
          params: { path: { endpoint: file.slug } },
          body: plan.roll,
        }),
        target.url,
      );
      done.push(`rolled to deployment v${rolled.version}`);
    }
  }
  emit(
    json,
    { slug: file.slug, applied: true, diff: plan.diff },
    () => `${file.slug}: ${done.join("; ")}.`,
  );
}
