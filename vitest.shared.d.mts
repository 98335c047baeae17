import type { TestProjectInlineConfiguration, ViteUserConfig } from "vitest/config";

export interface ThawVitestOptions {
  /** Global setup files of the integration project (the template database's, for instance). */
  integrationGlobalSetup?: string[];
}
export function thawVitestProjects(options?: ThawVitestOptions): TestProjectInlineConfiguration[];
export function thawVitestReporters(
  packageName: string,
): NonNullable<NonNullable<ViteUserConfig["test"]>["reporters"]>;
export function thawVitestConfig(packageName: string, options?: ThawVitestOptions): ViteUserConfig;
