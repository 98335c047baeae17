import type { Db, Prisma } from "@thaw/db";

/** A control-plane process (e.g. one scheduler instance) says it is alive and how it is. */
export async function recordServiceHeartbeat({
  db,
  input,
}: {
  db: Db;
  input: { instanceId: string; service: string; startedAt: Date; details: Prisma.InputJsonObject };
}) {
  const now = new Date();
  await db.serviceHeartbeat.upsert({
    where: { id: input.instanceId },
    create: {
      id: input.instanceId,
      service: input.service,
      startedAt: input.startedAt,
      lastSeenAt: now,
      details: input.details,
    },
    update: { lastSeenAt: now, details: input.details },
  });
}
