import { thawVitestProjects } from "@thaw/db/vitest";
import { defineConfig } from "vitest/config";

export default defineConfig({ test: { projects: thawVitestProjects() } });
