// Where snapshots live (issue 23, finding 13): a store the operator owns, never a tenant's
// registry. Pure: the scheduler's env check and the capture's naming both use it.

/**
 * Where the checkpoint image goes: the operator's snapshot store, one repository
 * (THAW_SNAPSHOT_REGISTRY), tagged <org>.<deployment>.<snapshot> — never the registry a
 * deployment's image comes from, which its tenant controls and could swap a checkpoint in. One
 * repository rather than one per org or deployment because registries such as ECR do not
 * create repositories on push; the tag scopes it (and lets lifecycle rules match an org's
 * prefix). The restore fetches it by the digest the capture reports, never by this tag.
 */
export function checkpointRefFor(
  snapshotStore: string,
  ids: { orgId: string; deploymentId: string; snapshotId: string },
): string {
  return storeRef(snapshotStore, "snapshot store", "", [
    ["orgId", ids.orgId],
    ["deploymentId", ids.deploymentId],
    ["snapshotId", ids.snapshotId],
  ]);
}

/**
 * `store:<prefix><id>.<id>…`, the named ids (UUIDs, checked) joined in order: a tag in the
 * operator's store (checked), for what `what` names in its errors.
 */
export function storeRef(
  store: string,
  what: string,
  prefix: string,
  ids: readonly (readonly [name: string, id: string])[],
): string {
  const problem = snapshotStoreProblem(store);
  if (problem) throw new Error(`${what} ${JSON.stringify(store)}: ${problem}`);
  for (const [name, id] of ids)
    if (!UUID.test(id)) throw new Error(`${name} ${JSON.stringify(id)} is not a UUID`);
  return `${store}:${prefix}${ids.map(([, id]) => id).join(".")}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** registry-host[:port]/repository[/…]: lower-case path components, no tag or digest. */
const SNAPSHOT_STORE =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+$/;

/** Why a THAW_SNAPSHOT_REGISTRY value is not a repository in a registry, or null when it is. */
export function snapshotStoreProblem(value: string): string | null {
  if (value.length > 255) return "is longer than 255 characters";
  if (value.includes("@") || /\/[^/]*:/.test(value))
    return "names a tag or digest: give the repository only (registry.example.com/thaw-snapshots)";
  const host = value.split("/")[0] ?? "";
  if (!value.includes("/") || !(host.includes(".") || host.includes(":") || host === "localhost"))
    return "must start with the registry's host (registry.example.com/thaw-snapshots): a bare name would mean Docker Hub";
  if (!SNAPSHOT_STORE.test(value))
    return "is not registry-host[:port]/repository with lower-case path components";
  return null;
}

/**
 * The reference a restore fetches: the capture's repository at the digest the capture
 * recorded (repo@sha256:…), the tag dropped — a tag names whatever was pushed last.
 */
export function checkpointByDigest(checkpointRef: string, digest: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest))
    throw new Error(`${JSON.stringify(digest)} is not a sha256 digest`);
  const withoutDigest = checkpointRef.split("@")[0]!;
  const lastSlash = withoutDigest.lastIndexOf("/");
  const tagAt = withoutDigest.indexOf(":", lastSlash + 1);
  const repository = tagAt === -1 ? withoutDigest : withoutDigest.slice(0, tagAt);
  return `${repository}@${digest}`;
}
