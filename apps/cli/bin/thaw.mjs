#!/usr/bin/env node
// The installed `thaw` command: runs the TypeScript entry point through tsx.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
