import { snapshotStoreProblem } from "../snapshots/checkpoint-ref.ts";

// Where kernel caches live: the operator's store (THAW_SNAPSHOT_REGISTRY), beside the
// checkpoints and for the same reason — never a tenant's registry, where a tenant could swap in
// the compiled code another start would load. Pure.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The tag a capture pushes a deployment's kernel cache to: `kc.<org>.<deployment>.<cache>` in
 * the store's one repository (113 characters, within a tag's 128). Fetches are by the digest
 * the capture reports, never by this tag.
 */
export function kernelCacheRefFor(
  store: string,
  ids: { orgId: string; deploymentId: string; kernelCacheId: string },
): string {
  const problem = snapshotStoreProblem(store);
  if (problem) throw new Error(`kernel-cache store ${JSON.stringify(store)}: ${problem}`);
  for (const [name, id] of Object.entries(ids))
    if (!UUID.test(id)) throw new Error(`${name} ${JSON.stringify(id)} is not a UUID`);
  return `${store}:kc.${ids.orgId}.${ids.deploymentId}.${ids.kernelCacheId}`;
}
