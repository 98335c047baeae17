import { z } from "zod";

// The agent's configuration, from the environment, validated once at start.
const Env = z.object({
  THAW_CONTROL_PLANE_URL: z.url().default("http://localhost:3000"),
  THAW_AGENT_RUNTIME: z
    .enum(["sim"], {
      message: "only 'sim' is available in this version (the containerd runtime is being built)",
    })
    .default("sim"),
  /** Simulated hosts to run in this process: "<instance-type>:<count>,…", e.g. "g5.xlarge:2,g6e.xlarge:1". */
  THAW_SIM_HOSTS: z
    .string()
    .regex(
      /^[a-z0-9.]+:\d+(,[a-z0-9.]+:\d+)*$/,
      "expected '<instance-type>:<count>[,…]', e.g. 'g5.xlarge:2,g6e.xlarge:1'",
    )
    .default("g5.xlarge:2,g6e.xlarge:2"),
  /** File with one join token per line; one is used per host that has no credential yet. */
  THAW_JOIN_TOKENS_FILE: z.string().optional(),
  /** Where per-host credentials are kept across restarts (mode 0600). */
  THAW_AGENT_STATE_DIR: z.string().default(".data/agent"),
  THAW_SIM_HOST_PREFIX: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .max(40)
    .default("sim"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]).default("info"),
});
export type AgentEnv = z.infer<typeof Env>;

export function loadEnv(source: NodeJS.ProcessEnv = process.env): AgentEnv {
  const parsed = Env.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`agent: bad configuration\n${lines.join("\n")}`);
  }
  return parsed.data;
}

export function parseSimHosts(spec: string): { instanceType: string; count: number }[] {
  return spec.split(",").map((part) => {
    const [instanceType = "", count = "0"] = part.split(":");
    return { instanceType, count: Number(count) };
  });
}
