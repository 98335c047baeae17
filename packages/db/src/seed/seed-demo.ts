import { hashPassword } from "better-auth/crypto";
import type { DbClient } from "../client.ts";
import { DEMO_ENDPOINTS, DEMO_ORG, DEMO_USER, type DemoEndpoint } from "./demo-catalog.ts";

/**
 * A catalog deployment as Deployment columns (image, model and engine): the seed's, and those
 * of the benches and tests that build endpoints on the catalog's models.
 */
export function demoDeploymentColumns(d: DemoEndpoint["deployment"]) {
  return {
    imageRef: d.imageRef,
    imageDigest: d.imageDigest,
    imageBytes: BigInt(Math.round(d.imageLayers.reduce((s, l) => s + l.bytes, 0))),
    imageLayers: d.imageLayers,
    estargzImageRef: d.estargzImageRef,
    estargzDigest: d.estargzDigest,
    modelSource: d.modelSource,
    modelBytes: BigInt(Math.round(d.modelBytes)),
    modelFormat: d.modelFormat,
    engine: d.engine,
    engineArgs: d.engineArgs,
    engineProfile: d.engineProfile,
  };
}

/**
 * Seeds the demo org, its owner and the demo endpoints. Idempotent: rows are found by their
 * natural keys and left alone when present, so a second run changes nothing.
 */
export async function seedDemo(
  db: DbClient,
): Promise<{ orgId: string; userId: string; created: string[] }> {
  const created: string[] = [];
  const org = await db.org.upsert({ where: { slug: DEMO_ORG.slug }, create: DEMO_ORG, update: {} });

  let user = await db.user.findUnique({ where: { email: DEMO_USER.email } });
  if (!user) {
    // The same row shape better-auth's email/password sign-up writes: a user and a
    // "credential" account holding the scrypt hash.
    const userId = crypto.randomUUID();
    user = await db.user.create({
      data: {
        id: userId,
        email: DEMO_USER.email,
        name: DEMO_USER.name,
        emailVerified: true,
        accounts: {
          create: {
            id: crypto.randomUUID(),
            accountId: userId,
            providerId: "credential",
            password: await hashPassword(DEMO_USER.password),
          },
        },
      },
    });
    created.push(`user ${DEMO_USER.email}`);
  }
  await db.membership.upsert({
    where: { orgId_userId: { orgId: org.id, userId: user.id } },
    create: { orgId: org.id, userId: user.id, role: "owner" },
    update: {},
  });

  for (const spec of DEMO_ENDPOINTS) {
    const existing = await db.endpoint.findUnique({
      where: { orgId_slug: { orgId: org.id, slug: spec.slug } },
    });
    if (existing) continue;
    const { deployment: d, ...endpoint } = spec;
    await db.$transaction(async (tx) => {
      const row = await tx.endpoint.create({
        data: { ...endpoint, orgId: org.id, desiredReplicas: endpoint.minReplicas },
      });
      const deployment = await tx.deployment.create({
        data: {
          orgId: org.id,
          endpointId: row.id,
          version: 1,
          status: "active",
          ...demoDeploymentColumns(d),
        },
      });
      await tx.endpoint.update({
        where: { id: row.id },
        data: { activeDeploymentId: deployment.id },
      });
    });
    created.push(`endpoint ${spec.slug}`);
  }
  return { orgId: org.id, userId: user.id, created };
}
