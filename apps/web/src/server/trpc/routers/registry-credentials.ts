import {
  deleteRegistryCredential,
  listRegistryCredentials,
  putRegistryCredential,
  PutRegistryCredentialInput,
  RegistryCredentialList,
  RegistryCredentialView,
  RegistryHost,
} from "@thaw/core";
import { z } from "zod";
import { sealingKey } from "../../sealing-key.ts";
import { coreInput } from "../core-input.ts";
import { protectedProcedure, router } from "../init.ts";

export const registryCredentialsRouter = router({
  list: protectedProcedure
    .output(RegistryCredentialList)
    .query(({ ctx }) => listRegistryCredentials({ actor: ctx.actor, db: ctx.db })),
  put: protectedProcedure
    .input(coreInput(PutRegistryCredentialInput))
    .output(RegistryCredentialView)
    .mutation(({ ctx, input }) =>
      putRegistryCredential({ actor: ctx.actor, input, db: ctx.db, sealingKey: sealingKey() }),
    ),
  delete: protectedProcedure
    .input(coreInput(z.object({ registry: RegistryHost }).strict()))
    .output(z.object({ registry: z.string(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) =>
      deleteRegistryCredential({ actor: ctx.actor, registry: input.registry, db: ctx.db }),
    ),
});
