// `pnpm --filter @thaw/db seed`: seeds the demo data into DATABASE_URL.
import { createDbClient } from "../client.ts";
import { DEMO_USER } from "./demo-catalog.ts";
import { seedDemo } from "./seed-demo.ts";

import { requireDatabaseUrl } from "../env.ts";

const db = createDbClient({ url: requireDatabaseUrl(), maxConnections: 2 });
try {
  const { created } = await seedDemo(db);
  console.error(
    created.length
      ? `seeded: ${created.join(", ")}`
      : "seed: demo data already present, nothing changed",
  );
  console.error(`demo sign-in: ${DEMO_USER.email} / ${DEMO_USER.password}`);
} finally {
  await db.$disconnect();
}
