import {
  ApiKeyList,
  createApiKey,
  CreateApiKeyInput,
  CreatedApiKey,
  listApiKeys,
  revokeApiKey,
  RevokeApiKeyInput,
  RevokedApiKey,
} from "@thaw/core";
import { orgQuotas } from "../../org-quotas.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const apiKeysRouter = router({
  list: protectedProcedure
    .output(ApiKeyList)
    .query(({ ctx }) => listApiKeys({ actor: ctx.actor, db: ctx.db })),
  create: protectedProcedure
    .input(coreInput(CreateApiKeyInput))
    .output(CreatedApiKey)
    .mutation(({ ctx, input }) =>
      createApiKey({ actor: ctx.actor, input, db: ctx.db, quotas: orgQuotas() }),
    ),
  revoke: protectedProcedure
    .input(coreInput(RevokeApiKeyInput))
    .output(RevokedApiKey)
    .mutation(({ ctx, input }) => revokeApiKey({ actor: ctx.actor, input, db: ctx.db })),
});
