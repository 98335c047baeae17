#!/usr/bin/env bash
# Sets up and runs every test: type-check and lint, unit tests, integration tests against
# the real PostgreSQL and Redis, and end-to-end tests in Chromium against the running stack.
# Ends with one line "N passed, N failed" summed over every test runner.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_node_and_pnpm
# Chromium for the browser tests; containerd, runc, a registry, umoci, skopeo and
# busybox-static for the agent's real pull-path test (it skips only without root).
if is_root; then apt_ensure chromium containerd runc docker-registry umoci skopeo busybox-static; else apt_ensure chromium; fi
pnpm_install
ensure_moto
ensure_schemathesis
ensure_promtool
ensure_otlp_proto
bash "$ROOT/infra/dev/services.sh"
load_service_env

REPORTS="$DATA/test-reports"
rm -rf "$REPORTS" && mkdir -p "$REPORTS"
export THAW_TEST_REPORT_DIR="$REPORTS"
export CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"

failed_steps=()
step() { # name, command...
  local name=$1; shift
  local t0=$SECONDS
  say "── $name"
  if (cd "$ROOT" && "$@"); then say "── $name: ok ($((SECONDS - t0)) s)"; else say "── $name: FAILED ($((SECONDS - t0)) s)"; failed_steps+=("$name"); fi
}

step "typecheck" pnpm -s turbo run typecheck --output-logs=errors-only
step "lint" pnpm -s turbo run lint --output-logs=errors-only
step "format" pnpm -s exec prettier --check . --log-level warn
step "unit tests" pnpm -s turbo run test --output-logs=full
step "integration tests" pnpm -s turbo run test:integration --concurrency=1 --output-logs=full
step "end-to-end tests" pnpm -s turbo run test:e2e --output-logs=full

node -e '
const fs = require("fs"), path = require("path");
let passed = 0, failed = 0, skipped = 0;
for (const f of fs.readdirSync(process.argv[1])) {
  const r = JSON.parse(fs.readFileSync(path.join(process.argv[1], f), "utf8"));
  passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests || 0);
}
console.log(`\ntests: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
' "$REPORTS"

if [ ${#failed_steps[@]} -gt 0 ]; then die "failed: ${failed_steps[*]}"; fi
say "all green in ${SECONDS} s"
