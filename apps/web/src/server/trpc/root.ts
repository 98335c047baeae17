import { alertsRouter } from "./routers/alerts.ts";
import { createCallerFactory, router } from "./init.ts";
import { analyticsRouter } from "./routers/analytics.ts";
import { apiKeysRouter } from "./routers/api-keys.ts";
import { auditRouter } from "./routers/audit.ts";
import { coldStartsRouter } from "./routers/cold-starts.ts";
import { deploymentsRouter } from "./routers/deployments.ts";
import { endpointsRouter } from "./routers/endpoints.ts";
import { fleetRouter } from "./routers/fleet.ts";
import { meProcedure } from "./routers/me.ts";
import { membersRouter } from "./routers/members.ts";
import { orgRouter } from "./routers/org.ts";
import { registryCredentialsRouter } from "./routers/registry-credentials.ts";
import { scalingRouter } from "./routers/scaling.ts";
import { systemRouter } from "./routers/system.ts";
import { webhooksRouter } from "./routers/webhooks.ts";

export const appRouter = router({
  me: meProcedure,
  endpoints: endpointsRouter,
  deployments: deploymentsRouter,
  fleet: fleetRouter,
  apiKeys: apiKeysRouter,
  audit: auditRouter,
  members: membersRouter,
  org: orgRouter,
  coldStarts: coldStartsRouter,
  system: systemRouter,
  analytics: analyticsRouter,
  scaling: scalingRouter,
  registryCredentials: registryCredentialsRouter,
  webhooks: webhooksRouter,
  alerts: alertsRouter,
});

export type AppRouter = typeof appRouter;

/** Server-side caller (server components, tests): same procedures, same authorization. */
export const createCaller = createCallerFactory(appRouter);
