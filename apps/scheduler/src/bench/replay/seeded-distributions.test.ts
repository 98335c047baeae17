import { mulberry32 } from "@thaw/core/cold-start-model";
import { describe, expect, it } from "vitest";
import {
  sampleExponential,
  sampleGamma,
  sampleLogGamma,
  sampleStandardNormal,
  sampleWeibull,
} from "./seeded-distributions.ts";

// Sample moments against the closed forms. With a fixed seed the draws are fixed, so these
// cannot flake; the tolerances are a few standard errors of the estimate at this sample size.

/** ln Γ(x) by Lanczos (g = 7, n = 9), accurate to ~1e-15 for x > 0.5. */
function logGammaFunction(x: number): number {
  const g = 7;
  const c = [
    0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531,
    -176.61503916999186, 12.507343278686905, -0.13857109526572012, 9.984369578019572e-6,
    1.5056327351493116e-7,
  ];
  const z = x - 1;
  let a = c[0]!;
  const t = z + g + 0.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}
const gammaFunction = (x: number) => Math.exp(logGammaFunction(x));

function moments(draw: () => number, n: number): { mean: number; variance: number } {
  let sum = 0;
  let sumSquares = 0;
  for (let i = 0; i < n; i++) {
    const x = draw();
    sum += x;
    sumSquares += x * x;
  }
  const mean = sum / n;
  return { mean, variance: sumSquares / n - mean * mean };
}

const N = 200_000;

describe("sampleStandardNormal", () => {
  it("has mean 0 and variance 1", () => {
    const random = mulberry32(11);
    const { mean, variance } = moments(() => sampleStandardNormal(random), N);
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(variance).toBeCloseTo(1, 1);
    expect(Math.abs(variance - 1)).toBeLessThan(0.015);
  });
});

describe("sampleGamma (Marsaglia–Tsang, boosted below shape 1)", () => {
  it.each([
    [0.3, 2],
    [1, 0.5],
    [2.5, 3],
    [40, 0.01],
  ])("shape %s, scale %s: mean shape·scale, variance shape·scale²", (shape, scale) => {
    const random = mulberry32(Math.round(shape * 1000 + scale * 7));
    const { mean, variance } = moments(() => sampleGamma(random, shape, scale), N);
    expect(Math.abs(mean / (shape * scale) - 1)).toBeLessThan(0.02);
    expect(Math.abs(variance / (shape * scale * scale) - 1)).toBeLessThan(0.05);
  });

  it("keeps the mean at the trace's smallest fitted shape (0.007), where plain draws underflow", () => {
    const random = mulberry32(5);
    const shape = 0.007;
    let sum = 0;
    let underflowing = 0;
    let notFinite = 0;
    const n = 1_000_000;
    for (let i = 0; i < n; i++) {
      const log = sampleLogGamma(random, shape);
      if (!Number.isFinite(log)) notFinite++;
      if (Math.exp(log) === 0) underflowing++;
      sum += Math.exp(log);
    }
    expect(notFinite).toBe(0);
    // P(U < e^(-744/143)) ≈ 0.55% of plain draws fall below the smallest double: the reason
    // the window rescales in logs.
    expect(underflowing / n).toBeGreaterThan(0.004);
    expect(underflowing / n).toBeLessThan(0.007);
    expect(Math.abs(sum / n / shape - 1)).toBeLessThan(0.05);
  });

  it("refuses a non-positive shape", () => {
    expect(() => sampleGamma(mulberry32(1), 0, 1)).toThrow(RangeError);
  });
});

describe("sampleWeibull (inverse CDF)", () => {
  it.each([
    [0.8, 2],
    [1.5, 1],
    [3, 10],
  ])("shape %s, scale %s: mean λΓ(1+1/k), variance λ²(Γ(1+2/k) − Γ(1+1/k)²)", (shape, scale) => {
    const random = mulberry32(Math.round(shape * 100 + scale));
    const { mean, variance } = moments(() => sampleWeibull(random, shape, scale), N);
    const expectedMean = scale * gammaFunction(1 + 1 / shape);
    const expectedVariance =
      scale * scale * (gammaFunction(1 + 2 / shape) - gammaFunction(1 + 1 / shape) ** 2);
    expect(Math.abs(mean / expectedMean - 1)).toBeLessThan(0.02);
    expect(Math.abs(variance / expectedVariance - 1)).toBeLessThan(0.05);
  });

  it("keeps the mean at a heavy-tailed shape (0.5)", () => {
    const random = mulberry32(3);
    const { mean } = moments(() => sampleWeibull(random, 0.5, 1), N);
    expect(Math.abs(mean / gammaFunction(3) - 1)).toBeLessThan(0.03);
  });
});

describe("sampleExponential", () => {
  it("has the given mean and variance mean²", () => {
    const random = mulberry32(9);
    const { mean, variance } = moments(() => sampleExponential(random, 4717), N);
    expect(Math.abs(mean / 4717 - 1)).toBeLessThan(0.01);
    expect(Math.abs(variance / 4717 ** 2 - 1)).toBeLessThan(0.03);
  });
});
