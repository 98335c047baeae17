import { isDeepStrictEqual } from "node:util";
import type { Schemas } from "../api.ts";

// `thaw apply`: what a declarative file asks of an endpoint that may or may not exist, as a
// plan — create it, patch the configuration fields that differ, roll a new deployment only
// when a deployment field the file sets differs from the active one — and the diff a person
// reads before it is carried out. Pure: the command loads, plans, prints, then calls.

export type EndpointFile = Schemas["CreateEndpoint"];
type UpdateBody = Schemas["UpdateEndpoint"];

/** Fields of an existing endpoint that PATCH changes. */
const MUTABLE_FIELDS = [
  "name",
  "minReplicas",
  "maxReplicas",
  "scaleToZeroIdleSeconds",
  "allowedPaths",
  "objective",
  "targetConcurrency",
  // A number, or null to follow the org's default again.
  "gpuSecondsPerWaitSecond",
] as const satisfies readonly (keyof UpdateBody & keyof EndpointFile)[];

/** Fields fixed at creation: a different value needs a new endpoint. */
const FIXED_FIELDS = ["gpuType", "gpuCount"] as const;

export interface DiffLine {
  kind: "create" | "change";
  field: string;
  from?: unknown;
  to: unknown;
}

export type ApplyPlan =
  | { action: "create"; body: EndpointFile; diff: DiffLine[] }
  | {
      action: "update";
      patch: UpdateBody | null;
      roll: EndpointFile["deployment"] | null;
      diff: DiffLine[];
    };

export class PlanError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

export function planApply(file: EndpointFile, current: Schemas["Endpoint"] | null): ApplyPlan {
  if (!current)
    return {
      action: "create",
      body: file,
      diff: Object.entries(file).map(([field, to]) => ({ kind: "create", field, to })),
    };
  for (const field of FIXED_FIELDS) {
    const wanted = file[field];
    if (wanted !== undefined && !sameValue(field, wanted, current[field]))
      throw new PlanError(
        `${field} is ${String(current[field])} on the existing endpoint and cannot change to ${String(wanted)}: delete the endpoint, or apply under another slug.`,
        field,
      );
  }
  const diff: DiffLine[] = [];
  const patch: Record<string, unknown> = {};
  for (const field of MUTABLE_FIELDS) {
    const wanted = file[field];
    if (wanted === undefined || isDeepStrictEqual(wanted, current[field])) continue;
    patch[field] = wanted;
    diff.push({ kind: "change", field, from: current[field], to: wanted });
  }
  const active = current.activeDeployment;
  const rollFields = Object.entries(file.deployment).filter(
    ([field, wanted]) =>
      wanted !== undefined &&
      !deploymentFieldMatches(field, wanted, active?.[field as keyof typeof active]),
  );
  for (const [field, wanted] of rollFields)
    diff.push({
      kind: "change",
      field: `deployment.${field}`,
      from: active?.[field as keyof typeof active],
      to: wanted,
    });
  return {
    action: "update",
    patch: Object.keys(patch).length > 0 ? patch : null,
    roll: rollFields.length > 0 ? file.deployment : null,
    diff,
  };
}

function sameValue(field: string, wanted: unknown, current: unknown): boolean {
  // GPU models are matched as the server matches them: case aside.
  if (field === "gpuType" && typeof wanted === "string" && typeof current === "string")
    return wanted.toLowerCase() === current.toLowerCase();
  return isDeepStrictEqual(wanted, current);
}

/** The engine profile is compared on the keys the file gives (the rest are defaults). */
function deploymentFieldMatches(field: string, wanted: unknown, current: unknown): boolean {
  if (field === "engineProfile" && typeof wanted === "object" && wanted && current)
    return Object.entries(wanted).every(([k, v]) =>
      isDeepStrictEqual(v, (current as Record<string, unknown>)[k]),
    );
  return isDeepStrictEqual(wanted, current);
}

/** The diff as a person reads it: one line per field. */
export function renderDiff(slug: string, plan: ApplyPlan): string {
  if (plan.action === "create")
    return [
      `+ endpoint ${slug} (new)`,
      ...plan.diff.map((d) => `  + ${d.field}: ${show(d.to)}`),
    ].join("\n");
  if (plan.diff.length === 0) return `= endpoint ${slug}: no changes`;
  const lines = plan.diff.map((d) => `  ~ ${d.field}: ${show(d.from)} → ${show(d.to)}`);
  const what = [plan.patch ? "configuration" : null, plan.roll ? "a new deployment version" : null]
    .filter(Boolean)
    .join(" and ");
  return [`~ endpoint ${slug} (${what})`, ...lines].join("\n");
}

function show(value: unknown): string {
  if (value === undefined || value === null) return "(none)";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
