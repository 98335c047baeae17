"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery } from "@tanstack/react-query";
import {
  CreateEndpointInput,
  DeploymentSpec,
  KNOWN_GPU_MODELS,
  trustRegistries,
} from "@thaw/core/schemas";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useRef, useState } from "react";
import { FormProvider, useForm } from "react-hook-form";
import { useTRPC } from "../../trpc/client.tsx";
import { errorMessage } from "../query-state.tsx";
import { ImageStep } from "./image-step.tsx";
import { ModelStep } from "./model-step.tsx";
import { PathsStep } from "./paths-step.tsx";
import { ReviewStep } from "./review-step.tsx";
import { ScalingStep } from "./scaling-step.tsx";
import { useArtifactsInspection } from "./use-artifacts-inspection.ts";
import {
  fieldOfServerError,
  messageOfServerError,
  startingValues,
  stepOf,
  wizardMessages,
  wizardSteps,
  type WizardField,
  type WizardValues,
} from "./wizard-form.ts";

// The deploy wizard: image → model → GPU and scaling → paths and objective → review, or, to
// roll an endpoint to a new deployment, image → model → review. Each step is checked against
// core's CreateEndpointInput (the schema endpoints.create parses) before the next opens; the
// server checks again, and an error it names lands next to its field, which takes the focus.

export function DeployWizard({
  endpointSlug,
  trustedRegistries = [],
}: {
  endpointSlug?: string;
  /** The operator's THAW_TRUSTED_REGISTRIES: the browser's reference check lets them through. */
  trustedRegistries?: readonly string[];
}) {
  const rolling = endpointSlug !== undefined;
  useMemo(() => trustRegistries(trustedRegistries), [trustedRegistries]);
  const steps = wizardSteps(rolling);
  const allFields = steps.flatMap((s) => s.fields);
  const reviewStep = steps.length - 1;
  const trpc = useTRPC();
  const router = useRouter();
  const fleet = useQuery({ ...trpc.fleet.nodes.queryOptions(), enabled: !rolling });
  const gpuChoices = useMemo(
    () => [...new Set([...(fleet.data ?? []).map((n) => n.gpuModel), ...KNOWN_GPU_MODELS])],
    [fleet.data],
  );

  // A roll validates the same schema and reads only the deployment's fields (the endpoint's
  // are not on its steps, so their errors are never asked for).
  const form = useForm<WizardValues, unknown, CreateEndpointInput>({
    resolver: zodResolver(CreateEndpointInput, { error: wizardMessages }),
    defaultValues: startingValues(),
  });
  const { trigger, getFieldState, getValues, setError, setFocus } = form;

  const [step, setStep] = useState(0);
  const [formError, setFormError] = useState<string | null>(null);
  const [focusField, setFocusField] = useState<WizardField | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);

  // Focus moves once the step showing the field has rendered.
  useEffect(() => {
    if (focusField) {
      setFocus(focusField);
      setFocusField(null);
    }
  }, [focusField, step, setFocus]);

  /** Shows the first of `fields` (in step order) that has an error, and focuses it. */
  const showFirstError = (fields: readonly WizardField[]) => {
    const first = fields.find((field) => getFieldState(field).error);
    if (!first) return;
    setStep(stepOf(steps, first) ?? step);
    setFocusField(first);
  };

  const onServerError = (error: unknown) => {
    const field = fieldOfServerError(error, allFields);
    const at = field && stepOf(steps, field);
    if (field && at !== null) {
      setError(field, { type: "server", message: messageOfServerError(errorMessage(error)) });
      setFormError(null);
      setStep(at);
      setFocusField(field);
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
  // The review step shows what the registry and the model source say of what was left out;
  // an answer that names a field (no such tag, a gated model) sends the user back to it.
  const inspection = useArtifactsInspection(
    step === reviewStep ? getValues().deployment : undefined,
    step === reviewStep,
    onServerError,
  );
  const pending = create.isPending || roll.isPending;
  const inspecting = inspection.needed && !inspection.data;

  const next = async () => {
    const fields = steps[step]?.fields ?? [];
    if (!(await trigger(fields))) return showFirstError(fields);
    setStep(step + 1);
    headingRef.current?.focus();
  };

  const submit = async () => {
    if (!(await trigger(allFields))) return showFirstError(allFields);
    setFormError(null);
    // What is sent is core's parse of the form (trimmed, defaults filled in); a rule over
    // something the wizard does not show would be named here rather than by the server.
    const values = getValues();
    if (rolling) {
      const deployment = DeploymentSpec.safeParse(values.deployment);
      if (deployment.success) roll.mutate({ endpoint: endpointSlug, deployment: deployment.data });
      else setFormError(deployment.error.issues[0]?.message ?? "The deployment is not valid.");
    } else {
      const input = CreateEndpointInput.safeParse(values);
      if (input.success) create.mutate(input.data);
      else setFormError(input.error.issues[0]?.message ?? "The endpoint is not valid.");
    }
  };

  return (
    <section className="card deploy-wizard" data-testid="deploy-wizard">
      <div className="card-head">
        <h2>{rolling ? `New deployment of ${endpointSlug}` : "Deploy an endpoint"}</h2>
      </div>
      <ol className="wizard-steps" aria-label="Steps">
        {steps.map(({ title }, i) => (
          <li
            key={title}
            aria-current={i === step ? "step" : undefined}
            className={i === step ? "current" : ""}
          >
            {i + 1}. {title}
          </li>
        ))}
      </ol>
      <FormProvider {...form}>
        <form
          className="form wizard-form"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            void (step === reviewStep ? submit() : next());
          }}
        >
          <h3 tabIndex={-1} ref={headingRef} data-testid="wizard-step-title">
            {steps[step]?.title}
          </h3>
          {step === 0 && <ImageStep />}
          {step === 1 && <ModelStep />}
          {!rolling && step === 2 && <ScalingStep gpuChoices={gpuChoices} />}
          {!rolling && step === 3 && <PathsStep />}
          {step === reviewStep && <ReviewStep rolling={rolling} inspection={inspection} />}
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
                disabled={pending || inspecting}
              >
                {pending ? "Deploying…" : "Deploy"}
              </button>
            )}
          </div>
        </form>
      </FormProvider>
    </section>
  );
}
