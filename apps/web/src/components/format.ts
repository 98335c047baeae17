const GB = 1e9;

/** Bytes as decimal gigabytes with one decimal, e.g. "13.4 GB". */
export function formatGB(bytes: number | null | undefined): string {
  if (bytes == null) return "—";
  return `${(bytes / GB).toFixed(1)} GB`;
}

/** Bytes in the largest decimal unit that keeps a leading digit: "13.4 GB", "980 MB", "13 kB". */
export function formatBytes(bytes: number): string {
  const units: [number, string][] = [
    [1e12, "TB"],
    [1e9, "GB"],
    [1e6, "MB"],
    [1e3, "kB"],
  ];
  const [size, unit] = units.find(([size]) => bytes >= size) ?? [1, "B"];
  return `${Number((bytes / size).toFixed(bytes >= 10 * size ? 1 : 2))} ${unit}`;
}

/** An age in seconds, e.g. "3 s", "4 min", "2 h"; "never" for null. */
export function formatAge(seconds: number | null | undefined): string {
  if (seconds == null) return "never";
  if (seconds < 120) return `${Math.max(0, Math.round(seconds))} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/** A duration, e.g. "4.2 s", "376 s"; "—" when unknown. */
export function formatSeconds(value: number | null | undefined): string {
  if (value == null) return "—";
  return value < 10 ? `${value.toFixed(1)} s` : `${Math.round(value)} s`;
}
