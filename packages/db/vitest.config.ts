import { thawVitestProjects } from "./src/testing/vitest-projects.ts";
import { defineConfig } from "vitest/config";

export default defineConfig({ test: { projects: thawVitestProjects() } });
