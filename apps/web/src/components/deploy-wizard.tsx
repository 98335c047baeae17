"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";

// The deploy wizard: image → model → GPU and scaling → paths and objective → review.
// The server validates everything (the same zod schemas as REST); the checks here only save a
// round trip, and a server error lands next to the field it names (data.details.field).

const PATHS = ["warm", "restore", "lazy", "pull"] as const;
const ENGINES = ["vllm", "sglang", "llama.cpp", "tgi", "triton", "custom"] as const;
const SUGGESTED_GPUS = ["A10G", "L4", "L40S", "A100 80GB", "H100 80GB", "H200"];

type Values = Record<string, string>;
type Errors = Partial<Record<string, string>>;

interface FieldSpec {
  key: string;
  label: string;
  step: number;
  hint?: string;
  check?: (value: string, all: Values) => string | null;
}

const required = (v: string) => (v.trim() === "" ? "Required." : null);
const optional = (check: (v: string) => string | null) => (v: string) =>
  v.trim() === "" ? null : check(v);
const gigabytes = (v: string) =>
  required(v) ??
  (Number.isFinite(Number(v)) && Number(v) > 0 && Number(v) <= 1000
    ? null
    : "A size in GB, above 0 and at most 1000.");
const wholeNumber = (min: number, max: number) => (v: string) =>
  required(v) ??
  (/^\d+$/.test(v.trim()) && Number(v) >= min && Number(v) <= max
    ? null
    : `A whole number from ${min} to ${max}.`);
const digest = optional((v) =>
  /^sha256:[a-f0-9]{64}$/.test(v.trim()) ? null : "sha256: followed by 64 lowercase hex digits.",
);

const IMAGE_FIELDS: FieldSpec[] = [
  { key: "deployment.imageRef", label: "Image reference", step: 0, check: required },
  {
    key: "deployment.imageDigest",
    label: "Image digest (optional)",
    step: 0,
    check: digest,
    hint: "Pins the image; without it the reference is the identity.",
  },
  { key: "deployment.imageBytes", label: "Image size (GB)", step: 0, check: gigabytes },
  {
    key: "deployment.estargzImageRef",
    label: "eStargz image reference (optional)",
    step: 0,
    hint: "A seekable variant of the same image enables the lazy start path.",
  },
  {
    key: "deployment.estargzDigest",
    label: "eStargz digest (optional)",
    step: 0,
    check: (v, all) =>
      digest(v) ??
      (v.trim() !== "" && (all["deployment.estargzImageRef"] ?? "").trim() === ""
        ? "Give the eStargz image reference too."
        : null),
  },
];
const MODEL_FIELDS: FieldSpec[] = [
  {
    key: "deployment.modelSource",
    label: "Model source",
    step: 1,
    hint: "hf://owner/repo, s3://bucket/key, gs://bucket/key or https:// on a public host.",
    check: (v) =>
      required(v) ??
      (/^(hf|s3|gs|https):\/\//.test(v.trim()) ? null : "Use hf://, s3://, gs:// or https://."),
  },
  { key: "deployment.modelBytes", label: "Model size (GB)", step: 1, check: gigabytes },
  { key: "deployment.modelFormat", label: "Model format", step: 1, check: required },
  { key: "deployment.engine", label: "Engine", step: 1, check: required },
];
const ENDPOINT_FIELDS: FieldSpec[] = [
  {
    key: "slug",
    label: "Endpoint slug",
    step: 2,
    hint: "Lowercase letters, digits and '-': the name in URLs and the API.",
    check: (v) =>
      required(v) ?? (/^[a-z0-9][a-z0-9-]{0,62}$/.test(v) ? null : "1–63 of a–z, 0–9 and '-'."),
  },
  { key: "name", label: "Display name", step: 2, check: required },
  { key: "gpuType", label: "GPU type", step: 2, check: required },
  { key: "gpuCount", label: "GPUs per replica", step: 2, check: wholeNumber(1, 8) },
  { key: "minReplicas", label: "Minimum replicas", step: 2, check: wholeNumber(0, 1000) },
  {
    key: "desiredReplicas",
    label: "Desired replicas",
    step: 2,
    check: (v, all) =>
      wholeNumber(0, 1000)(v) ??
      (Number(v) < Number(all.minReplicas) || Number(v) > Number(all.maxReplicas)
        ? "Between the minimum and the maximum."
        : null),
  },
  {
    key: "maxReplicas",
    label: "Maximum replicas",
    step: 2,
    check: (v, all) =>
      wholeNumber(1, 1000)(v) ??
      (Number(v) < Number(all.minReplicas) ? "At least the minimum." : null),
  },
  { key: "allowedPaths", label: "Allowed start paths", step: 3 },
  { key: "objective", label: "Objective", step: 3 },
  {
    key: "gpuSecondsPerWaitSecond",
    label: "Price of waiting (optional)",
    step: 3,
    hint: "GPU-seconds of idle capacity the warm pool may spend to save a request one second of wait: 0 keeps nothing warm beyond the minimum, higher puts latency first. Empty: the org's default.",
    check: optional((v) =>
      Number.isFinite(Number(v)) && Number(v) >= 0 && Number(v) <= 100_000
        ? null
        : "A number from 0 to 100000.",
    ),
  },
];

const INITIAL: Values = {
  "deployment.imageRef": "",
  "deployment.imageDigest": "",
  "deployment.imageBytes": "",
  "deployment.estargzImageRef": "",
  "deployment.estargzDigest": "",
  "deployment.modelSource": "",
  "deployment.modelBytes": "",
  "deployment.modelFormat": "safetensors",
  "deployment.engine": "vllm",
  slug: "",
  name: "",
  gpuType: "",
  gpuCount: "1",
  minReplicas: "0",
  desiredReplicas: "1",
  maxReplicas: "2",
  objective: "mean",
  gpuSecondsPerWaitSecond: "",
};

const idOf = (key: string) => `deploy-${key.replace(/\./g, "-")}`;
const bytesOf = (gb: string) => Math.round(Number(gb) * 1e9);
const orUndefined = (v: string | undefined) => (v && v.trim() !== "" ? v.trim() : undefined);

/** The field a server error names: `input.deployment.imageRef` → `deployment.imageRef`. */
function fieldOfServerError(error: unknown, fields: FieldSpec[]): string | null {
  const data = (error as { data?: { details?: { field?: unknown } | null } } | null)?.data;
  const raw = typeof data?.details?.field === "string" ? data.details.field : "";
  const path = raw.replace(/^(input|body)\./, "");
  const match = fields
    .map((f) => f.key)
    .filter((key) => path === key || path.startsWith(`${key}.`))
    .sort((a, b) => b.length - a.length)[0];
  return match ?? null;
}

export function DeployWizard({ endpointSlug }: { endpointSlug?: string }) {
  const rolling = endpointSlug !== undefined;
  const trpc = useTRPC();
  const router = useRouter();
  const fleet = useQuery({ ...trpc.fleet.nodes.queryOptions(), enabled: !rolling });
  const gpuChoices = useMemo(
    () => [...new Set([...(fleet.data ?? []).map((n) => n.gpuModel), ...SUGGESTED_GPUS])],
    [fleet.data],
  );
  const fields = rolling
    ? [...IMAGE_FIELDS, ...MODEL_FIELDS]
    : [...IMAGE_FIELDS, ...MODEL_FIELDS, ...ENDPOINT_FIELDS];
  const steps = rolling
    ? ["Image", "Model", "Review"]
    : ["Image", "Model", "GPU and scaling", "Paths and objective", "Review"];
  const reviewStep = steps.length - 1;

  const [step, setStep] = useState(0);
  const [values, setValues] = useState<Values>(INITIAL);
  const [paths, setPaths] = useState<string[]>([...PATHS]);
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [focusKey, setFocusKey] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    if (focusKey) {
      document.getElementById(idOf(focusKey))?.focus();
      setFocusKey(null);
    }
  }, [focusKey, step]);

  const deployment = () => ({
    imageRef: values["deployment.imageRef"]!.trim(),
    imageDigest: orUndefined(values["deployment.imageDigest"]),
    imageBytes: bytesOf(values["deployment.imageBytes"]!),
    estargzImageRef: orUndefined(values["deployment.estargzImageRef"]),
    estargzDigest: orUndefined(values["deployment.estargzDigest"]),
    modelSource: values["deployment.modelSource"]!.trim(),
    modelBytes: bytesOf(values["deployment.modelBytes"]!),
    modelFormat: values["deployment.modelFormat"]!.trim(),
    engine: values["deployment.engine"] as (typeof ENGINES)[number],
  });

  const onServerError = (error: unknown) => {
    const field = fieldOfServerError(error, fields);
    const message = errorMessage(error).replace(/^(input|body|deployment)\.[\w.]+: /, "");
    if (field) {
      setErrors({ [field]: message });
      setStep(fields.find((f) => f.key === field)!.step);
      setFocusKey(field);
      setFormError(null);
    } else setFormError(errorMessage(error));
  };
  const create = useMutation(
    trpc.endpoints.create.mutationOptions({
      onSuccess: (endpoint) => router.push(`/endpoints/${endpoint.slug}`),
      onError: onServerError,
    }),
  );
  const roll = useMutation(
    trpc.deployments.create.mutationOptions({
      onSuccess: () => router.push(`/endpoints/${endpointSlug}`),
      onError: onServerError,
    }),
  );
  const pending = create.isPending || roll.isPending;

  const validate = (only?: number): Errors => {
    const found: Errors = {};
    for (const f of fields) {
      if (only !== undefined && f.step !== only) continue;
      const problem =
        f.key === "allowedPaths"
          ? paths.length === 0
            ? "Allow at least one path."
            : null
          : (f.check?.(values[f.key] ?? "", values) ?? null);
      if (problem) found[f.key] = problem;
    }
    return found;
  };

  const next = () => {
    const found = validate(step);
    setErrors(found);
    const first = fields.find((f) => found[f.key]);
    if (first) setFocusKey(first.key);
    else {
      setStep(step + 1);
      headingRef.current?.focus();
    }
  };

  const submit = () => {
    const found = validate();
    setErrors(found);
    const first = fields.find((f) => found[f.key]);
    if (first) {
      setStep(first.step);
      setFocusKey(first.key);
      return;
    }
    setFormError(null);
    if (rolling) roll.mutate({ endpoint: endpointSlug, deployment: deployment() });
    else
      create.mutate({
        slug: values.slug!.trim(),
        name: values.name!.trim(),
        gpuType: values.gpuType!.trim(),
        gpuCount: Number(values.gpuCount),
        minReplicas: Number(values.minReplicas),
        desiredReplicas: Number(values.desiredReplicas),
        maxReplicas: Number(values.maxReplicas),
        allowedPaths: PATHS.filter((p) => paths.includes(p)),
        objective: values.objective as "mean" | "p90",
        gpuSecondsPerWaitSecond:
          orUndefined(values.gpuSecondsPerWaitSecond) === undefined
            ? undefined
            : Number(values.gpuSecondsPerWaitSecond),
        deployment: deployment(),
      });
  };

  const set = (key: string, value: string) => {
    setValues((v) => ({ ...v, [key]: value }));
    if (errors[key]) setErrors((e) => ({ ...e, [key]: undefined }));
  };

  const field = (key: string, input?: (props: InputProps) => ReactNode) => {
    const spec = fields.find((f) => f.key === key)!;
    const id = idOf(key);
    const props: InputProps = {
      id,
      name: key,
      value: values[key] ?? "",
      "aria-invalid": errors[key] ? true : undefined,
      "aria-describedby":
        [errors[key] && `${id}-error`, spec.hint && `${id}-hint`].filter(Boolean).join(" ") ||
        undefined,
      "data-testid": id,
      onChange: (e: { target: { value: string } }) => set(key, e.target.value),
    };
    return (
      <div className="wizard-field" key={key}>
        <label htmlFor={id}>{spec.label}</label>
        {input ? input(props) : <input type="text" autoComplete="off" {...props} />}
        {spec.hint && (
          <span id={`${id}-hint`} className="muted small">
            {spec.hint}
          </span>
        )}
        {errors[key] && (
          <span id={`${id}-error`} className="form-error" data-testid={`${id}-error`}>
            {errors[key]}
          </span>
        )}
      </div>
    );
  };

  const review: [string, string][] = [
    ...(rolling
      ? []
      : ([
          ["Endpoint", `${values.slug} — ${values.name}`],
          ["GPU", `${values.gpuCount} × ${values.gpuType}`],
          [
            "Replicas",
            `min ${values.minReplicas}, desired ${values.desiredReplicas}, max ${values.maxReplicas}`,
          ],
          ["Start paths", paths.join(", ")],
          ["Objective", values.objective === "p90" ? "p90 time-to-ready" : "mean time-to-ready"],
          [
            "Price of waiting",
            orUndefined(values.gpuSecondsPerWaitSecond)
              ? `${values.gpuSecondsPerWaitSecond} GPU-s per second of wait`
              : "the org's default",
          ],
        ] as [string, string][])),
    ["Image", `${values["deployment.imageRef"]} (${values["deployment.imageBytes"]} GB)`],
    ["eStargz", values["deployment.estargzImageRef"] || "none"],
    [
      "Model",
      `${values["deployment.modelSource"]} (${values["deployment.modelBytes"]} GB, ${values["deployment.modelFormat"]})`,
    ],
    ["Engine", values["deployment.engine"] ?? ""],
  ];

  return (
    <section className="card deploy-wizard" data-testid="deploy-wizard">
      <div className="card-head">
        <h2>{rolling ? `New deployment of ${endpointSlug}` : "Deploy an endpoint"}</h2>
      </div>
      <ol className="wizard-steps" aria-label="Steps">
        {steps.map((name, i) => (
          <li
            key={name}
            aria-current={i === step ? "step" : undefined}
            className={i === step ? "current" : ""}
          >
            {i + 1}. {name}
          </li>
        ))}
      </ol>
      <form
        className="form wizard-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (step === reviewStep) submit();
          else next();
        }}
      >
        <h3 tabIndex={-1} ref={headingRef} data-testid="wizard-step-title">
          {steps[step]}
        </h3>
        {step === 0 && IMAGE_FIELDS.map((f) => field(f.key))}
        {step === 1 && (
          <>
            {field("deployment.modelSource")}
            {field("deployment.modelBytes")}
            {field("deployment.modelFormat")}
            {field("deployment.engine", (props) => (
              <select {...props}>
                {ENGINES.map((e) => (
                  <option key={e} value={e}>
                    {e}
                  </option>
                ))}
              </select>
            ))}
          </>
        )}
        {!rolling && step === 2 && (
          <>
            {field("slug")}
            {field("name")}
            {field("gpuType", (props) => (
              <>
                <input type="text" list="deploy-gpu-choices" autoComplete="off" {...props} />
                <datalist id="deploy-gpu-choices">
                  {gpuChoices.map((g) => (
                    <option key={g} value={g} />
                  ))}
                </datalist>
              </>
            ))}
            {field("gpuCount", (props) => (
              <input type="number" min={1} max={8} {...props} />
            ))}
            {field("minReplicas", (props) => (
              <input type="number" min={0} {...props} />
            ))}
            {field("desiredReplicas", (props) => (
              <input type="number" min={0} {...props} />
            ))}
            {field("maxReplicas", (props) => (
              <input type="number" min={1} {...props} />
            ))}
          </>
        )}
        {!rolling && step === 3 && (
          <>
            <fieldset
              className="wizard-paths"
              aria-invalid={errors.allowedPaths ? true : undefined}
              aria-describedby={errors.allowedPaths ? "deploy-allowedPaths-error" : undefined}
            >
              <legend>Allowed start paths</legend>
              {PATHS.map((p, i) => (
                <label key={p} className="inline-field">
                  <input
                    type="checkbox"
                    id={i === 0 ? idOf("allowedPaths") : undefined}
                    data-testid={`deploy-path-${p}`}
                    checked={paths.includes(p)}
                    onChange={(e) => {
                      setPaths((old) =>
                        e.target.checked ? [...old, p] : old.filter((x) => x !== p),
                      );
                      setErrors((old) => ({ ...old, allowedPaths: undefined }));
                    }}
                  />
                  {p}
                </label>
              ))}
              {errors.allowedPaths && (
                <span
                  id="deploy-allowedPaths-error"
                  className="form-error"
                  data-testid="deploy-allowedPaths-error"
                >
                  {errors.allowedPaths}
                </span>
              )}
            </fieldset>
            {field("objective", (props) => (
              <select {...props}>
                <option value="mean">mean time-to-ready</option>
                <option value="p90">p90 time-to-ready</option>
              </select>
            ))}
            {field("gpuSecondsPerWaitSecond", (props) => (
              <input
                type="number"
                inputMode="decimal"
                min={0}
                max={100_000}
                step="any"
                {...props}
              />
            ))}
          </>
        )}
        {step === reviewStep && (
          <dl className="facts" data-testid="deploy-review">
            {review.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        )}
        {formError && (
          <p className="form-error" role="alert" data-testid="deploy-error">
            {formError}
          </p>
        )}
        <div className="wizard-actions">
          {step > 0 && (
            <button
              type="button"
              className="button"
              onClick={() => setStep(step - 1)}
              disabled={pending}
            >
              Back
            </button>
          )}
          {step < reviewStep ? (
            <button type="submit" className="button primary" data-testid="wizard-next">
              Next
            </button>
          ) : (
            <button
              type="submit"
              className="button primary"
              data-testid="deploy-submit"
              disabled={pending}
            >
              {pending ? "Deploying…" : "Deploy"}
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

interface InputProps {
  id: string;
  name: string;
  value: string;
  "aria-invalid": true | undefined;
  "aria-describedby": string | undefined;
  "data-testid": string;
  onChange: (e: { target: { value: string } }) => void;
}
