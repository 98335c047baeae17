// Liveness probe of one scheduler process, run inside its container:
//
//   node /app/infra/deploy/scheduler-liveness.mjs        exit 0 = alive, 1 = stuck or dead
//
// The scheduler serves no HTTP; what it offers is a heartbeat: every 5 s its periodic tick
// (apps/scheduler/src/scheduler.ts → tasks/report-health.ts) upserts its row in the
// "ServiceHeartbeat" table, keyed by its instance id — THAW_SCHEDULER_ID when set, else
// `scheduler-<hostname>-<pid>-<random>`. This probe reads that row: a row older than
// THAW_SCHEDULER_LIVENESS_MAX_AGE_SECONDS (60) means the process stopped ticking (a wedged event
// loop, a dead database pool), and restarting it is the fix. Both run in the same container,
// so the same clock wrote and reads the timestamp.
//
// When PostgreSQL itself cannot be reached the probe says alive: that is not this process's
// fault and restarting every scheduler would not fix it (the scheduler reports it in its log).
import { createRequire } from "node:module";
import { hostname } from "node:os";

const maxAgeSeconds = Number(process.env.THAW_SCHEDULER_LIVENESS_MAX_AGE_SECONDS ?? "60");
const databaseUrl = process.env.DATABASE_URL;
const explicitId = process.env.THAW_SCHEDULER_ID;

// `pg` is a dependency of @thaw/db; resolve it from there (this file is not in a package).
const require = createRequire(new URL("../../packages/db/package.json", import.meta.url));
const { Client } = require("pg");

function done(code, message) {
  (code === 0 ? console.log : console.error)(`scheduler-liveness: ${message}`);
  process.exit(code);
}

if (!databaseUrl) done(1, "DATABASE_URL is not set");

// Without THAW_SCHEDULER_ID the id starts with `scheduler-<hostname>-`; `_` and `%` are LIKE
// wildcards, so escape them (and the escape character itself).
const likePattern = `scheduler-${hostname().replace(/[\\%_]/g, (c) => `\\${c}`)}-%`;

const client = new Client({
  connectionString: databaseUrl,
  connectionTimeoutMillis: 3_000,
  query_timeout: 3_000,
});
try {
  await client.connect();
} catch (error) {
  done(0, `cannot reach PostgreSQL (${error.message}); not this process's fault, reporting alive`);
}
try {
  const { rows } = await client.query(
    `SELECT EXTRACT(EPOCH FROM max("lastSeenAt"))::float8 AS "lastSeen"
       FROM "ServiceHeartbeat"
      WHERE service = 'scheduler' AND ${explicitId ? "id = $1" : "id LIKE $1"}`,
    [explicitId ?? likePattern],
  );
  const lastSeen = rows[0]?.lastSeen;
  if (lastSeen === null || lastSeen === undefined) {
    done(1, `no heartbeat row for ${explicitId ?? likePattern} yet`);
  }
  const ageSeconds = Date.now() / 1000 - lastSeen;
  if (ageSeconds > maxAgeSeconds) {
    done(1, `last heartbeat ${ageSeconds.toFixed(0)} s ago (limit ${maxAgeSeconds} s)`);
  }
  done(0, `last heartbeat ${ageSeconds.toFixed(1)} s ago`);
} catch (error) {
  done(0, `heartbeat query failed (${error.message}); reporting alive`);
} finally {
  await client.end().catch(() => {});
}
