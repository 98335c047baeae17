import { thawVitestProjects } from "./src/testing/vitest-projects.mjs";
import { defineConfig } from "vitest/config";

export default defineConfig({ test: { projects: thawVitestProjects() } });
