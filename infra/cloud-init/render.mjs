// Builds infra/cloud-init/gpu-host.yaml from gpu-host.src.yaml: every `#@include <path>` line
// (path relative to this folder) becomes that file's text, indented like the directive, so the
// GPU host gets exactly the files in infra/agent/ and scripts/ — one copy of each in the repo.
//
//   node infra/cloud-init/render.mjs           write gpu-host.yaml
//   node infra/cloud-init/render.mjs --check   exit 1 when gpu-host.yaml is not up to date
//   node infra/cloud-init/render.mjs --fill [--gzip]
//       print gpu-host.yaml with the placeholders filled from the environment (a manual
//       launch's user-data), gzip-compressed with --gzip
//
// The placeholder contract (what a provisioner substitutes, and nothing else) is PLACEHOLDERS.
// The filled-in file is larger than EC2's 16 KiB user-data limit: send it gzip-compressed
// (cloud-init recognises gzip user-data), e.g. UserData = gzipSync(text).toString("base64").
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

export const PLACEHOLDERS = [
  "THAW_CONTROL_PLANE_URL",
  "THAW_JOIN_TOKEN",
  "THAW_AGENT_BUNDLE_URL",
  "THAW_AGENT_BUNDLE_SHA256",
  "THAW_REGISTRY_HOST",
  "THAW_STARGZ_SHA256",
  "THAW_NODE_SHA256",
  "THAW_CUDA_CHECKPOINT_SHA256",
];
/** Placeholders that may be substituted with an empty string. */
const OPTIONAL = new Set(["THAW_REGISTRY_HOST"]);
/** EC2 refuses user-data above 16 KiB (the raw bytes, before base64). */
export const USER_DATA_LIMIT_BYTES = 16_384;

const here = dirname(fileURLToPath(import.meta.url));
const sourcePath = join(here, "gpu-host.src.yaml");
const outputPath = join(here, "gpu-host.yaml");
const NOTICE = [
  "# GENERATED from infra/cloud-init/gpu-host.src.yaml by `node infra/cloud-init/render.mjs`:",
  "# edit the source (and the files it includes from infra/agent/ and scripts/), then re-render.",
];

export function render() {
  const out = [];
  for (const line of readFileSync(sourcePath, "utf8").split("\n")) {
    const include = /^(\s*)#@include (\S+)$/.exec(line);
    if (line === "#@notice") {
      out.push(...NOTICE);
    } else if (include) {
      const [, indent, path] = include;
      const text = readFileSync(join(here, path), "utf8");
      if (!text.endsWith("\n")) throw new Error(`${path}: must end with a newline`);
      if (/\$\{THAW_/.test(text)) {
        throw new Error(`${path}: contains "\${THAW_", which a provisioner would substitute`);
      }
      for (const included of text.slice(0, -1).split("\n")) {
        out.push(included === "" ? "" : indent + included);
      }
    } else {
      out.push(line);
    }
  }
  return out.join("\n");
}

/** The user-data for one host: every placeholder replaced by `values[name]`. */
export function fill(template, values) {
  return template.replace(/\$\{(THAW_[A-Z0-9_]+)\}/g, (whole, name) => {
    if (!PLACEHOLDERS.includes(name)) throw new Error(`unknown placeholder ${whole}`);
    const value = values[name] ?? "";
    if (value === "" && !OPTIONAL.has(name)) throw new Error(`${name} is not set`);
    if (/[\n\r]/.test(value)) throw new Error(`${name} must be one line`);
    // A checksum the bootstrap will hold a download to: 64 hex digits, nothing else.
    if (name.endsWith("_SHA256") && !/^[0-9a-f]{64}$/.test(value))
      throw new Error(`${name} must be a SHA-256 (64 lower-case hex digits)`);
    return value;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2] ?? "--write";
  try {
    const rendered = render();
    if (mode === "--check") {
      const current = readFileSync(outputPath, "utf8");
      if (current !== rendered) {
        console.error("gpu-host.yaml is out of date: run node infra/cloud-init/render.mjs");
        process.exit(1);
      }
      console.error(`gpu-host.yaml is up to date (${Buffer.byteLength(rendered)} bytes)`);
    } else if (mode === "--fill") {
      const text = fill(readFileSync(outputPath, "utf8"), process.env);
      const gzip = process.argv.includes("--gzip");
      const userData = gzip ? gzipSync(text, { level: 9 }) : Buffer.from(text);
      if (userData.length > USER_DATA_LIMIT_BYTES) {
        throw new Error(
          `user-data is ${userData.length} bytes; EC2 allows ${USER_DATA_LIMIT_BYTES}` +
            (gzip ? "" : " (add --gzip)"),
        );
      }
      process.stdout.write(userData);
    } else if (mode === "--write") {
      writeFileSync(outputPath, rendered);
      console.error(`wrote gpu-host.yaml (${Buffer.byteLength(rendered)} bytes)`);
    } else {
      console.error("usage: node infra/cloud-init/render.mjs [--check | --fill [--gzip]]");
      process.exit(2);
    }
  } catch (error) {
    console.error(`render: ${error.message}`);
    process.exit(1);
  }
}
