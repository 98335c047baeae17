import { z } from "zod";

export function loadCliEnv(source: NodeJS.ProcessEnv = process.env) {
  const parsed = z
    .object({
      DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL"),
    })
    .safeParse(source);
  if (!parsed.success) {
    console.error(
      "DATABASE_URL is not set or malformed (source .data/services.env after 'bash infra/dev/services.sh').",
    );
    process.exit(2);
  }
  return parsed.data;
}
