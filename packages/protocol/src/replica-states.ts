import { z } from "zod";

// A replica has two lifecycles, seen from two places. The control plane's is a Replica row's:
// it is placed before any node hears of it, and it drains and stops by the control plane's
// decision. A node's agent knows only what runs on its host: a replica it accepted a start
// for, until that start ends or the replica is stopped. The names keep the two apart.

/**
 * A Replica row's state in the control plane (the database enum ReplicaState):
 * pending → placed → starting → ready ⇄ warm → sleeping, → draining → stopped, or failed.
 * Sleeping: its engine sleeps in its node's memory, its GPUs given back, until woken.
 */
export const ReplicaState = z.enum([
  "pending",
  "placed",
  "starting",
  "ready",
  "warm",
  "sleeping",
  "draining",
  "stopped",
  "failed",
]);
export type ReplicaState = z.infer<typeof ReplicaState>;

/**
 * A replica that runs on a node, as its agent and the agent's runtime hold it (and report it
 * in the inventory): starting (the start is running), running (ready, serving), warm (parked
 * for a later warm handover, holding its GPUs), sleeping (its engine asleep and its GPUs given
 * back, holding host memory until the wake path wakes it on those GPUs).
 */
export const AgentReplicaState = z.enum(["starting", "running", "warm", "sleeping"]);
export type AgentReplicaState = z.infer<typeof AgentReplicaState>;

/**
 * How a replica the agent accepted ended: its start failed, or it was stopped (or captured
 * into a snapshot). The agent remembers it for a while, so that a resent call gets the same
 * answer; it no longer runs, so it is in no inventory.
 */
export const EndedAgentReplicaState = z.enum(["failed", "stopped"]);
export type EndedAgentReplicaState = z.infer<typeof EndedAgentReplicaState>;
