"use client";

import { useMutation } from "@tanstack/react-query";
import { type DeploymentSpec } from "@thaw/core/schemas";
import { useEffect } from "react";
import type { z } from "zod";
import { useTRPC } from "../../trpc/client.tsx";

type Deployment = z.input<typeof DeploymentSpec>;

export interface ArtifactsInspection {
  /** Whether the deployment leaves out something only the registry or the source can say. */
  needed: boolean;
  pending: boolean;
  data: Awaited<ReturnType<ReturnType<typeof useInspectMutation>["mutateAsync"]>> | undefined;
  error: unknown;
}

function useInspectMutation(onError: (error: unknown) => void) {
  const trpc = useTRPC();
  return useMutation(trpc.deployments.inspect.mutationOptions({ onError }));
}

/**
 * The registry's and the model source's answer for the deployment as the review step shows
 * it, asked once each time that step opens on a deployment that leaves sizes out.
 */
export function useArtifactsInspection(
  deployment: Partial<Deployment> | undefined,
  active: boolean,
  onError: (error: unknown) => void,
): ArtifactsInspection {
  const inspect = useInspectMutation(onError);
  const needsImage = deployment?.imageBytes === undefined && deployment?.imageLayers === undefined;
  const needsModel = deployment?.modelBytes === undefined || deployment.modelFormat === undefined;
  const needed = needsImage || needsModel;
  const imageRef = deployment?.imageRef;
  const modelSource = needsModel ? deployment?.modelSource : undefined;
  const { mutate, reset } = inspect;
  useEffect(() => {
    if (!active || !needed || !imageRef) return reset();
    mutate({ imageRef, ...(modelSource && { modelSource }) });
  }, [active, needed, imageRef, modelSource, mutate, reset]);
  return {
    needed: active && needed,
    pending: inspect.isPending,
    data: inspect.data,
    error: inspect.error,
  };
}
