import { readFileSync } from "node:fs";

/**
 * The GPU host's cloud-init user-data: the template (infra/cloud-init/gpu-host.yaml) with
 * its ${THAW_…} placeholders filled. Every placeholder must be known and every value one
 * line, so a value can never inject YAML; a template naming an unknown one fails loudly.
 */
export function renderUserData(template: string, values: Record<string, string>): string {
  for (const [name, value] of Object.entries(values)) {
    if (!/^THAW_[A-Z0-9_]+$/.test(name)) throw new Error(`user-data: bad placeholder name ${name}`);
    if (!/^[\x21-\x7e]*$/.test(value) || value.includes("'"))
      throw new Error(`user-data: ${name} must be printable ASCII without spaces or quotes`);
  }
  const unknown = new Set<string>();
  const text = template.replace(/\$\{(THAW_[A-Z0-9_]+)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) unknown.add(name);
    return value ?? whole;
  });
  if (unknown.size > 0)
    throw new Error(`user-data template needs values for ${[...unknown].sort().join(", ")}`);
  return text;
}

export function loadUserDataTemplate(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(
      `cannot read the GPU host user-data template ${path}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
