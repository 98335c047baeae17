// What the /metrics tests read: the exposition text parsed here to the letter of the
// Prometheus text format 0.0.4 (# HELP / # TYPE lines, then `name{label="value",…} value`),
// not by the prom-client that wrote it, so a malformed line fails the test. (The npm
// parse-prometheus-text-format folds a labelled histogram's series into one and drops its
// count and sum, so it cannot check these histograms.)

export interface PrometheusSample {
  /** The series name: a histogram's are `<family>_bucket`, `_sum` and `_count`. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  samples: PrometheusSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`malformed labels in: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  // Prometheus reads values with Go's ParseFloat, which takes NaN in any case; prom-client
  // writes its event-loop lag as "Nan" before the first sample.
  if (text.toLowerCase() === "nan") return Number.NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`malformed value in: ${line}`);
  return value;
}

export function parsePrometheusText(text: string): Map<string, PrometheusFamily> {
  const families = new Map<string, PrometheusFamily>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, help: "", type: "untyped", samples: [] }));
    return f;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const f = family(meta[2]!);
      if (meta[1] === "HELP") f.help = meta[3]!;
      else f.type = meta[3] as PrometheusFamily["type"];
      continue;
    }
    if (line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`malformed sample: ${line}`);
    const name = match[1]!;
    const base = name.replace(/_(bucket|sum|count)$/, "");
    const owner = families.get(name) ?? (families.has(base) ? families.get(base)! : family(name));
    owner.samples.push({
      name,
      labels: parseLabels(match[2] ?? "", line),
      value: parseValue(match[3]!, line),
    });
  }
  return families;
}

/**
 * The sum of a family's values over the samples whose labels include `where` (for a
 * histogram, of its `_count` series: how many observations); 0 when nothing matches.
 */
export function sumSamples(
  families: Map<string, PrometheusFamily>,
  name: string,
  where: Record<string, string> = {},
): number {
  const family = families.get(name);
  if (!family) return 0;
  const series = family.type === "histogram" ? `${name}_count` : name;
  let total = 0;
  for (const sample of family.samples) {
    if (sample.name !== series) continue;
    if (!Object.entries(where).every(([k, v]) => sample.labels[k] === v)) continue;
    total += sample.value;
  }
  return total;
}

/** The sum of a histogram's `_sum` series over the samples whose labels include `where`. */
export function sumObserved(
  families: Map<string, PrometheusFamily>,
  name: string,
  where: Record<string, string> = {},
): number {
  let total = 0;
  for (const sample of families.get(name)?.samples ?? []) {
    if (sample.name !== `${name}_sum`) continue;
    if (!Object.entries(where).every(([k, v]) => sample.labels[k] === v)) continue;
    total += sample.value;
  }
  return total;
}
