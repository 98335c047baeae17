import type { TestProjectInlineConfiguration } from "vitest/config";
export function thawVitestProjects(): TestProjectInlineConfiguration[];
