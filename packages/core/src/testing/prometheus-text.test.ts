import { describe, expect, it } from "vitest";
import { parsePrometheusText, sumObserved, sumSamples } from "./prometheus-text.ts";

describe("parsePrometheusText", () => {
  const text = [
    "# HELP thaw_x_seconds A histogram.",
    "# TYPE thaw_x_seconds histogram",
    'thaw_x_seconds_bucket{le="1",path="lazy"} 1',
    'thaw_x_seconds_bucket{le="+Inf",path="lazy"} 2',
    'thaw_x_seconds_sum{path="lazy"} 3.5',
    'thaw_x_seconds_count{path="lazy"} 2',
    'thaw_x_seconds_bucket{le="1",path="pull"} 0',
    'thaw_x_seconds_bucket{le="+Inf",path="pull"} 1',
    'thaw_x_seconds_sum{path="pull"} 40',
    'thaw_x_seconds_count{path="pull"} 1',
    "# HELP thaw_y_total A counter.",
    "# TYPE thaw_y_total counter",
    'thaw_y_total{endpoint="a\\"b",outcome="ok"} 4',
    "thaw_y_total 1",
    "",
  ].join("\n");

  it("keeps each labelled histogram series apart, with its count and sum", () => {
    const m = parsePrometheusText(text);
    expect(m.get("thaw_x_seconds")!.type).toBe("histogram");
    expect(sumSamples(m, "thaw_x_seconds")).toBe(3);
    expect(sumSamples(m, "thaw_x_seconds", { path: "pull" })).toBe(1);
    expect(sumObserved(m, "thaw_x_seconds", { path: "lazy" })).toBe(3.5);
    expect(sumSamples(m, "thaw_y_total", { endpoint: 'a"b' })).toBe(4);
    expect(sumSamples(m, "thaw_y_total")).toBe(5);
  });

  it("refuses a malformed sample or label set", () => {
    expect(() => parsePrometheusText("thaw_y_total{a=1} 2")).toThrow(/malformed labels/);
    expect(() => parsePrometheusText("thaw_y_total two")).toThrow(/malformed value/);
    expect(() => parsePrometheusText("{} 2")).toThrow(/malformed sample/);
  });
});
