import { storeRef } from "../snapshots/checkpoint-ref.ts";

// Where kernel caches live: the operator's store (THAW_SNAPSHOT_REGISTRY), beside the
// checkpoints and for the same reason — never a tenant's registry, where a tenant could swap in
// the compiled code another start would load. Pure.

/**
 * The tag a capture pushes a deployment's kernel cache to: `kc.<org>.<deployment>.<cache>` in
 * the store's one repository (113 characters, within a tag's 128). Fetches are by the digest
 * the capture reports, never by this tag.
 */
export function kernelCacheRefFor(
  store: string,
  ids: { orgId: string; deploymentId: string; kernelCacheId: string },
): string {
  return storeRef(store, "kernel-cache store", "kc.", [
    ["orgId", ids.orgId],
    ["deploymentId", ids.deploymentId],
    ["kernelCacheId", ids.kernelCacheId],
  ]);
}
