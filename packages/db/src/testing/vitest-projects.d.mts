import type { TestProjectInlineConfiguration } from "vitest/config";
export function thawVitestProjects(): TestProjectInlineConfiguration[];
export function thawVitestConfig(packageName: string): {
  test: { projects: TestProjectInlineConfiguration[]; reporters: unknown[] };
};
