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
# --continue: a package's failure does not cancel the others', so one flaky test costs its own
# result only, and the summary below names every failure there is.
step "integration tests" pnpm -s turbo run test:integration --concurrency=1 --continue --output-logs=full
step "end-to-end tests" pnpm -s turbo run test:e2e --continue --output-logs=full

node -e '
const fs = require("fs"), path = require("path");
let passed = 0, failed = 0, skipped = 0;
const failures = [];
for (const f of fs.readdirSync(process.argv[1])) {
  const r = JSON.parse(fs.readFileSync(path.join(process.argv[1], f), "utf8"));
  passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests || 0);
  // CI keeps only the tail of the output: the failures are named here, at the end, with the
  // first line of what each said (a file that failed to load or in a hook has no test of its own).
  for (const file of r.testResults || []) {
    const where = path.relative(process.cwd(), file.name);
    const tests = (file.assertionResults || []).filter((a) => a.status === "failed");
    for (const t of tests) failures.push(`${where} > ${t.fullName}: ${String(t.failureMessages?.[0] ?? "").split("\n")[0]}`);
    if (file.status === "failed" && tests.length === 0) failures.push(`${where}: ${String(file.message || "failed").split("\n")[0]}`);
  }
}
if (failures.length) console.log("\nfailed tests:\n" + failures.map((f) => "  " + f.slice(0, 400)).join("\n"));
console.log(`\ntests: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
' "$REPORTS"

if [ ${#failed_steps[@]} -gt 0 ]; then die "failed: ${failed_steps[*]}"; fi
say "all green in ${SECONDS} s"
