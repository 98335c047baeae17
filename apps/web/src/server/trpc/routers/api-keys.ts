import {
  createApiKey,
  CreateApiKeyInput,
  listApiKeys,
  revokeApiKey,
  RevokeApiKeyInput,
} from "@thaw/core";
import { orgQuotas } from "../../org-quotas.ts";
import { protectedProcedure, router } from "../init.ts";

export const apiKeysRouter = router({
  list: protectedProcedure.query(({ ctx }) => listApiKeys({ actor: ctx.actor, db: ctx.db })),
  create: protectedProcedure
    .input(CreateApiKeyInput)
    .mutation(({ ctx, input }) =>
      createApiKey({ actor: ctx.actor, input, db: ctx.db, quotas: orgQuotas() }),
    ),
  revoke: protectedProcedure
    .input(RevokeApiKeyInput)
    .mutation(({ ctx, input }) => revokeApiKey({ actor: ctx.actor, input, db: ctx.db })),
});
