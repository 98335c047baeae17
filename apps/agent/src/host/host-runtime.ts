import { type StartPath } from "@thaw/core/vocabulary";
import { type StartReplicaRequest } from "@thaw/protocol";
import { type Runtime, type RuntimeInventory } from "../runtimes/runtime.ts";

/**
 * What the host layer needs of a runtime beyond the shared interface: which paths it can
 * serve at all (and why not the others), a runtime-specific refusal (e.g. a snapshot bound
 * to another driver), and an inventory it can read without awaiting when that is cheap.
 * Runtimes that do not offer them serve every path and are asked asynchronously.
 */
export interface HostRuntime extends Runtime {
  capabilities?(): { paths: StartPath[]; reasons: Partial<Record<StartPath, string>> };
  refusal?(request: StartReplicaRequest): string | undefined;
  inventoryNow?(): RuntimeInventory;
}
