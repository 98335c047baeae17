import type { Frontiers } from "@thaw/core/replay";

// The frontiers as an SVG a browser shows: mean wait (log scale) against idle GPU-hours, one
// line per policy family, each point labelled with its setting. Hand-written on purpose: a
// chart library would need a DOM; this is a few lines of markup.

const COLORS: Record<string, string> = {
  thaw: "#1f6feb",
  clairvoyant: "#111111",
  "pull-keepalive": "#d1242f",
  "lazy-keepalive": "#bf8700",
  "hybrid-histogram-pull": "#8250df",
  oracle: "#1a7f37",
  "thaw-capped-hybrid": "#57606a",
  "thaw-no-peer": "#0969da",
  "thaw-no-kernel-cache": "#cf222e",
};

const escape = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function frontierSvg(frontiers: Frontiers, title: string): string {
  const width = 900;
  const height = 560;
  const m = { left: 70, right: 190, top: 40, bottom: 50 };
  const points = Object.values(frontiers).flatMap((p) => p ?? []);
  const maxIdle = Math.max(1e-6, ...points.map((p) => p.idleGpuHours)) * 1.05;
  const waits = points.map((p) => Math.max(0.01, p.meanWaitSeconds));
  const lo = Math.log10(Math.min(...waits, 0.1));
  const hi = Math.log10(Math.max(...waits, 1)) + 0.1;
  const x = (idle: number) => m.left + (idle / maxIdle) * (width - m.left - m.right);
  const y = (wait: number) =>
    m.top + (1 - (Math.log10(Math.max(0.01, wait)) - lo) / (hi - lo)) * (height - m.top - m.bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${m.left}" y="22" font-size="14">${escape(title)}</text>`,
    `<line x1="${m.left}" y1="${height - m.bottom}" x2="${width - m.right}" y2="${height - m.bottom}" stroke="#888"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${height - m.bottom}" stroke="#888"/>`,
    `<text x="${(m.left + width - m.right) / 2}" y="${height - 12}" text-anchor="middle">idle GPU-hours</text>`,
    `<text x="16" y="${(m.top + height - m.bottom) / 2}" transform="rotate(-90 16 ${(m.top + height - m.bottom) / 2})" text-anchor="middle">mean wait, s (log)</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const idle = (maxIdle * i) / 5;
    parts.push(
      `<text x="${x(idle)}" y="${height - m.bottom + 16}" text-anchor="middle">${idle.toFixed(idle < 10 ? 1 : 0)}</text>`,
    );
  }
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e++)
    parts.push(
      `<line x1="${m.left}" y1="${y(10 ** e)}" x2="${width - m.right}" y2="${y(10 ** e)}" stroke="#eee"/>`,
      `<text x="${m.left - 6}" y="${y(10 ** e) + 4}" text-anchor="end">${10 ** e}</text>`,
    );
  let legend = 0;
  for (const [family, list] of Object.entries(frontiers)) {
    if (!list || list.length === 0) continue;
    const color = COLORS[family] ?? "#444";
    const sorted = [...list].sort((a, b) => a.idleGpuHours - b.idleGpuHours);
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${sorted
        .map((p) => `${x(p.idleGpuHours).toFixed(1)},${y(p.meanWaitSeconds).toFixed(1)}`)
        .join(" ")}"/>`,
    );
    for (const p of sorted)
      parts.push(
        `<circle cx="${x(p.idleGpuHours).toFixed(1)}" cy="${y(p.meanWaitSeconds).toFixed(1)}" r="3" fill="${color}"><title>${escape(`${family} ${p.setting}: ${p.meanWaitSeconds} s, ${p.idleGpuHours} idle GPU-h`)}</title></circle>`,
      );
    const ly = m.top + 16 * legend++;
    parts.push(
      `<line x1="${width - m.right + 12}" y1="${ly}" x2="${width - m.right + 32}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${width - m.right + 38}" y="${ly + 4}">${escape(family)}</text>`,
    );
  }
  parts.push("</svg>");
  return parts.join("\n");
}
