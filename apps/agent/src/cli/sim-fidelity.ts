// `pnpm --silent sim:fidelity [--json]`: the cold-start model against published measurements
// it was not fitted to (packages/core/src/cold-start-model/fidelity/cases). Per case the
// published and predicted seconds and the error, with today's constants, with constants
// fitted on every case, and cross-validated (refit without the case's source); then the
// targets, each met or missed. `--json` prints one JSON document (bench-contracts.md).
// Bad input exits 2 with a message naming the file or the field.
import {
  evaluateFidelity,
  fidelityReportJson,
  loadFidelitySuite,
  type FidelityCase,
  type FidelityReport,
} from "@thaw/core/cold-start-model/fidelity";

function fail(message: string): never {
  process.stderr.write(`sim:fidelity: ${message}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const json = args.includes("--json");
const unknown = args.filter((arg) => arg !== "--json");
if (unknown.length > 0)
  fail(`unknown argument ${unknown[0]}; usage: pnpm --silent sim:fidelity [--json]`);

function loadCases(): FidelityCase[] {
  try {
    return loadFidelitySuite();
  } catch (error) {
    fail((error as Error).message);
  }
}

const report = evaluateFidelity(loadCases());
process.stdout.write(
  json ? `${JSON.stringify(fidelityReportJson(report))}\n` : humanReport(report),
);

function humanReport(report: FidelityReport): string {
  const percent = (fraction: number) =>
    `${fraction >= 0 ? "+" : ""}${(fraction * 100).toFixed(1)}%`;
  const seconds = (value: number) => value.toFixed(2);
  const lines: string[] = [];
  const idWidth = Math.max(...report.cases.map((verdict) => verdict.id.length), 4);
  lines.push(
    `Cold-start model vs published measurements: ${report.summary.cases} cases from ${report.summary.sources} sources`,
    "(error = (predicted - published) / published; current = today's constants, fitted = fitted on all",
    " cases, cross-validated = refit without the case's source)",
    "",
    [
      "case".padEnd(idWidth),
      "published".padStart(10),
      "current".padStart(10),
      "error".padStart(9),
      "fitted".padStart(9),
      "cross-val".padStart(10),
    ].join("  "),
  );
  for (const verdict of report.cases) {
    lines.push(
      [
        verdict.id.padEnd(idWidth),
        seconds(verdict.publishedSeconds).padStart(10),
        seconds(verdict.predictedSeconds).padStart(10),
        percent(verdict.relativeError).padStart(9),
        percent(verdict.fittedError).padStart(9),
        percent(verdict.crossValidatedError).padStart(10),
      ].join("  "),
    );
    for (const phase of verdict.phases) {
      lines.push(
        [
          `  ${phase.phase}`.padEnd(idWidth),
          seconds(phase.publishedSeconds).padStart(10),
          seconds(phase.predictedSeconds).padStart(10),
          percent(phase.relativeError).padStart(9),
        ].join("  "),
      );
    }
  }
  const { current, fitted, crossValidated } = report.summary;
  const magnitude = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;
  lines.push(
    "",
    "|error|            median    worst",
    `current         ${magnitude(current.medianAbsError).padStart(9)} ${magnitude(current.worstAbsError).padStart(8)}`,
    `fitted          ${magnitude(fitted.medianAbsError).padStart(9)} ${magnitude(fitted.worstAbsError).padStart(8)}`,
    `cross-validated ${magnitude(crossValidated.medianAbsError).padStart(9)} ${magnitude(crossValidated.worstAbsError).padStart(8)}`,
    "",
    "Fitted constants (today -> fitted on all cases):",
    ...report.parameters.map(
      (parameter) =>
        `  ${parameter.name.padEnd(36)} ${parameter.current.toPrecision(3).padStart(10)} -> ${parameter.fitted.toPrecision(3)}`,
    ),
    "",
    "Field-notes rows (calibration anchors), error today / fitted:",
    ...report.anchors.map(
      (anchor) =>
        `  ${anchor.id.padEnd(40)} ${percent(anchor.currentError).padStart(8)} / ${percent(anchor.fittedError)}`,
    ),
    "",
    "Orderings the sources compare (fastest first):",
    ...report.orderings.flatMap((ordering) => [
      `  ${ordering.group}`,
      `    published:       ${ordering.published.join(" < ")}`,
      `    current:         ${ordering.current.join(" < ")}`,
      `    cross-validated: ${ordering.crossValidated.join(" < ")}`,
    ]),
    "",
    "Targets:",
    ...report.targets.map(
      (target) => `  [${target.met ? "met" : "missed"}] ${target.name}: ${target.value}`,
    ),
    "",
  );
  return lines.join("\n");
}
