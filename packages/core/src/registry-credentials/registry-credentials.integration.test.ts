import { randomBytes } from "node:crypto";
import { CreateRepositoryCommand, ECRClient } from "@aws-sdk/client-ecr";
import { useTestDatabase } from "@thaw/db/testing";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import type { AppError } from "../errors/index.ts";
import { inspectImage } from "../images/inspect-image.ts";
import {
  pushTinyImage,
  startTestRegistry,
  type TestRegistry,
} from "../images/testing/test-registry.ts";
import { fetchPublic } from "../net/public-fetch.ts";
import { startMotoServer, type MotoServer } from "../testing/moto-server.ts";
import { deleteRegistryCredential } from "./delete-registry-credential.ts";
import { listRegistryCredentials } from "./list-registry-credentials.ts";
import { putRegistryCredential } from "./put-registry-credential.ts";
import { registryAuthForImages } from "./registry-auth-for-images.ts";
import { trustRegistries } from "../deployments/source-policy.ts";

// Registry credentials: sealed at rest, never answered, scoped to the org, used to inspect a
// real registry behind htpasswd auth, and (ECR) traded for a token at moto's ECR API.

const sealingKey = randomBytes(32);
const PASSWORD = "s3cret-registry-password";
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("should have been refused");
    },
    (e: unknown) => e as AppError,
  );

describe("registry credentials", () => {
  const database = useTestDatabase();
  let admin: Actor;
  let member: Actor;
  let otherOrg: Actor;
  let registry: TestRegistry;
  let moto: MotoServer | undefined;

  beforeAll(async () => {
    const db = database.current.db;
    const [a, b] = await Promise.all([
      db.org.create({ data: { slug: "creds-a", name: "A" } }),
      db.org.create({ data: { slug: "creds-b", name: "B" } }),
    ]);
    const user = await db.user.create({
      data: { id: crypto.randomUUID(), email: "admin@a.test", name: "Admin" },
    });
    admin = { type: "user", userId: user.id, orgId: a.id, role: "admin" };
    member = { type: "user", userId: user.id, orgId: a.id, role: "member" };
    otherOrg = { type: "user", userId: user.id, orgId: b.id, role: "owner" };
    registry = await startTestRegistry({
      basicAuth: {
        username: "puller",
        password: PASSWORD,
        bcryptHash: bcrypt.hashSync(PASSWORD, 5),
      },
    });
    trustRegistries([registry.host]);
    await pushTinyImage(registry, "team/private", "v1", "private weights loader\n");
  }, 60_000);

  afterAll(async () => {
    trustRegistries([]);
    await registry?.stop();
    await moto?.stop();
  });

  const inspect = (orgId: string) =>
    inspectImage({
      ref: `${registry.host}/team/private:v1`,
      field: "body.imageRef",
      config: {
        http: (url, init) =>
          fetchPublic(url, { ...init, timeoutMs: 5_000, trustedHosts: new Set([registry.host]) }),
        credentialsFor: async () =>
          (
            await registryAuthForImages({
              db: database.current.db,
              orgId,
              imageRefs: [`${registry.host}/team/private:v1`],
              sealingKey,
            })
          )[0] ?? null,
        trustedRegistries: new Set([registry.host]),
      },
    });

  it("inspects a private registry with the org's credential, and only the org's", async () => {
    const db = database.current.db;
    const without = await refusal(inspect(admin.orgId));
    expect(without.code).toBe("UNPROCESSABLE");
    expect(without.message).toMatch(
      /wants credentials for team\/private .*add a registry credential/,
    );

    const saved = await putRegistryCredential({
      actor: admin,
      input: { kind: "basic", registry: registry.host, username: "puller", secret: PASSWORD },
      db,
      sealingKey,
    });
    expect(JSON.stringify(saved)).not.toContain(PASSWORD);
    const row = await db.registryCredential.findUniqueOrThrow({ where: { id: saved.id } });
    expect(row.sealedSecret).not.toContain(PASSWORD);
    expect(row.sealedSecret).not.toContain(Buffer.from(PASSWORD).toString("base64"));

    const found = await inspect(admin.orgId);
    expect(found.layers).toHaveLength(1);
    // Another org has no credential there: refused, as before.
    expect((await refusal(inspect(otherOrg.orgId))).message).toMatch(/wants credentials/);
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: "registry_credential.saved" },
    });
    expect(JSON.stringify(audit.metadata)).not.toContain(PASSWORD);
  });

  it("refuses a wrong password with a message that names the registry, not the secret", async () => {
    const db = database.current.db;
    await putRegistryCredential({
      actor: admin,
      input: { kind: "basic", registry: registry.host, username: "puller", secret: "wrong-one" },
      db,
      sealingKey,
    });
    const error = await refusal(inspect(admin.orgId));
    expect(error.message).toMatch(/refused the org's credentials/);
    expect(error.message).not.toContain("wrong-one");
    await putRegistryCredential({
      actor: admin,
      input: { kind: "basic", registry: registry.host, username: "puller", secret: PASSWORD },
      db,
      sealingKey,
    });
  });

  it("lists without secrets, lets only admins manage, and keeps orgs apart", async () => {
    const db = database.current.db;
    const list = await listRegistryCredentials({ actor: admin, db });
    expect(list.registryCredentials.map((c) => [c.registry, c.username])).toEqual([
      [registry.host, "puller"],
    ]);
    expect(JSON.stringify(list)).not.toContain(PASSWORD);
    expect((await listRegistryCredentials({ actor: otherOrg, db })).registryCredentials).toEqual(
      [],
    );
    await expect(listRegistryCredentials({ actor: member, db })).rejects.toThrow(
      /registries:manage/,
    );
    const notFound = await refusal(
      deleteRegistryCredential({ actor: otherOrg, registry: registry.host, db }),
    );
    expect(notFound.code).toBe("NOT_FOUND");
    // A row copied to another org does not open there: the seal is bound to org and registry.
    const row = await db.registryCredential.findFirstOrThrow({ where: { orgId: admin.orgId } });
    await db.registryCredential.create({
      data: { ...row, id: crypto.randomUUID(), orgId: otherOrg.orgId },
    });
    await expect(
      registryAuthForImages({
        db,
        orgId: otherOrg.orgId,
        imageRefs: [`${registry.host}/team/private:v1`],
        sealingKey,
      }),
    ).rejects.toThrow();
  });

  it("refuses a private registry the operator did not trust, and works without a key only to say so", async () => {
    const db = database.current.db;
    const privateHost = await refusal(
      putRegistryCredential({
        actor: admin,
        input: { kind: "basic", registry: "10.0.0.5:5000", username: "u", secret: "p" },
        db,
        sealingKey,
      }),
    );
    expect(privateHost.message).toMatch(/input\.registry: 10\.0\.0\.5 is a loopback, private/);
    const noKey = await refusal(
      putRegistryCredential({
        actor: admin,
        input: { kind: "basic", registry: "ghcr.io", username: "u", secret: "p" },
        db,
        sealingKey: null,
      }),
    );
    expect(noKey.code).toBe("UNAVAILABLE");
    expect(noKey.message).toMatch(/THAW_CREDENTIALS_KEY/);
  });

  it("trades an ECR credential for a registry token at the ECR API (moto)", async () => {
    const db = database.current.db;
    moto = await startMotoServer();
    const ecr = new ECRClient({
      region: "us-east-1",
      endpoint: moto.endpoint,
      credentials: { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "testing-secret-key" },
    });
    await ecr.send(new CreateRepositoryCommand({ repositoryName: "thaw" }));
    ecr.destroy();
    const registryHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com";
    await putRegistryCredential({
      actor: admin,
      input: {
        kind: "ecr",
        registry: registryHost,
        username: "AKIAIOSFODNN7EXAMPLE",
        secret: "testing-secret-key",
      },
      db,
      sealingKey,
    });
    const [auth] = await registryAuthForImages({
      db,
      orgId: admin.orgId,
      imageRefs: [`${registryHost}/thaw:v1`, "ghcr.io/other/image:v1"],
      sealingKey,
      ecrEndpoint: moto.endpoint,
    });
    expect(auth).toMatchObject({ registry: registryHost, username: "AWS" });
    expect(auth!.password.length).toBeGreaterThan(10);
    expect(auth!.password).not.toContain("testing-secret-key");
    // The token's expiry is carried along (moto answers a fixed 2015 date; AWS, now + 12 h).
    expect(auth!.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});
