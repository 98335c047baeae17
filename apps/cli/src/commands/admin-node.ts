import {
  createJoinToken,
  drainNode,
  isAppError,
  listNodes,
  revokeNode,
  rotateNodeCredential,
  type Actor,
} from "@thaw/core";
import { createDbClient, type DbClient } from "@thaw/db";
import { cliEnv } from "../env.ts";
import { CliError } from "../errors.ts";
import { emit, table } from "../output.ts";

// `thaw admin node …`: an operator's per-node identity actions, straight on the database
// (DATABASE_URL) like the other admin commands, each through the same core use case as the
// dashboard's buttons, audited. Drain and revoke move replicas at the scheduler's next sweep
// (a few seconds): the CLI has no queue to poke.

export type NodeAction = "rotate" | "drain" | "revoke" | "join-token";

async function withOrg<T>(
  orgSlug: string,
  run: (actor: Actor, db: DbClient) => Promise<T>,
): Promise<T> {
  const { DATABASE_URL } = cliEnv();
  if (!DATABASE_URL)
    throw new CliError(
      "DATABASE_URL is not set: 'thaw admin' talks to the control plane's database (source .data/services.env on a dev machine).",
    );
  const db = createDbClient({ url: DATABASE_URL, maxConnections: 1 });
  try {
    const org = await db.org.findUnique({ where: { slug: orgSlug } });
    if (!org) throw new CliError(`No org '${orgSlug}'.`, "org");
    return await run({ type: "system", orgId: org.id }, db);
  } catch (error) {
    if (isAppError(error))
      throw new CliError(
        error.message,
        error.details?.field === "nodeId" ? "node" : error.details?.field,
      );
    throw error;
  } finally {
    await db.$disconnect();
  }
}

/** `thaw admin node list --org <slug>`: the org's nodes and where their credentials stand. */
export async function listNodesAsAdmin(options: { org: string; json?: boolean }): Promise<void> {
  const nodes = await withOrg(options.org, (actor, db) => listNodes({ actor, db }));
  const rows = nodes.map((n) => ({
    id: n.id,
    name: n.name,
    state: n.state,
    credential: n.credentialRevoked
      ? "revoked"
      : n.credentialRotationPending
        ? "rotating"
        : "active",
  }));
  emit(options.json ?? false, { nodes: rows }, () =>
    table([
      ["ID", "NAME", "STATE", "CREDENTIAL"],
      ...rows.map((r) => [r.id, r.name, r.state, r.credential]),
    ]),
  );
}

/**
 * `thaw admin node rotate|drain|revoke|join-token --org <slug> --node <name|instance id|id>`.
 * join-token prints only the token (shown once): a host that lost its credential, or whose
 * node was revoked, joins again as this node with it.
 */
export async function nodeActionAsAdmin(
  action: NodeAction,
  options: { org: string; node: string; reason?: string; ttl?: number; json?: boolean },
): Promise<void> {
  const json = options.json ?? false;
  await withOrg(options.org, async (actor, db) => {
    const input = { node: options.node, reason: options.reason };
    switch (action) {
      case "rotate": {
        const done = await rotateNodeCredential({ actor, input, db });
        return emit(
          json,
          done,
          () => `${done.name}: its agent fetches a new credential at its next heartbeat`,
        );
      }
      case "drain": {
        // The reconciles that follow are left to the sweep (see above).
        const { result: done } = await drainNode({ actor, input, db });
        return emit(
          json,
          done,
          () =>
            `${done.name}: draining; ${done.endpointIds.length} endpoint(s) move their replicas at the scheduler's next sweep`,
        );
      }
      case "revoke": {
        const { result: done } = await revokeNode({ actor, input, db });
        return emit(
          json,
          done,
          () =>
            `${done.name}: revoked (no credential of it is accepted) and draining; 'thaw admin node join-token' lets its host join again`,
        );
      }
      case "join-token": {
        // By id, name or instance id, as the other actions take it (createJoinToken then
        // checks the node is the org's).
        const isId = /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(options.node);
        const found = await db.node.findMany({
          where: {
            orgId: actor.orgId,
            state: { not: "terminated" },
            OR: isId
              ? [{ id: options.node }]
              : [{ name: options.node }, { instanceId: options.node }],
          },
          select: { id: true },
          take: 2,
        });
        const ids = found.map((n) => n.id);
        if (ids.length !== 1)
          throw new CliError(
            ids.length === 0
              ? `No node ${options.node} in this org.`
              : `${options.node} names more than one node: use the node's id (thaw admin node list).`,
            "node",
          );
        const made = await createJoinToken({
          actor,
          input: { ttlSeconds: options.ttl ?? 3600, nodeId: ids[0] },
          db,
        });
        return emit(json, { token: made.token, expiresAt: made.expiresAt }, () => made.token);
      }
    }
  });
}
