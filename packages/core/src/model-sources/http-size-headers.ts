// A file's size from an HTTP answer's headers (pure, so the odd servers are unit-tested):
// a HEAD's Content-Length, or a ranged GET's Content-Range total. Header names are lowercase,
// as fetchPublic gives them.

/** Bytes as a header writes them: digits only, a safe integer, or null. */
function bytesOf(text: string | undefined): number | null {
  if (text === undefined || !/^\d{1,16}$/.test(text.trim())) return null;
  const bytes = Number(text.trim());
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** A compressed body's length is not the file's. */
function isCompressed(headers: Record<string, string>): boolean {
  const encoding = headers["content-encoding"]?.trim().toLowerCase();
  return encoding !== undefined && encoding !== "" && encoding !== "identity";
}

/** The size a HEAD says the body would be, or null (no Content-Length, or a compressed body). */
export function sizeFromHead(status: number, headers: Record<string, string>): number | null {
  if (status < 200 || status >= 300) return null;
  if (isCompressed(headers)) return null;
  return bytesOf(headers["content-length"]);
}

/**
 * The whole file's size from the answer to `Range: bytes=0-0`: 206's `bytes 0-0/<total>`; a
 * 416 (the file is empty) says `bytes * /0`; a server that ignores Range answers 200 with the
 * whole body, whose Content-Length is the size. `*` as the total is an unknown size.
 */
export function sizeFromRangedGet(
  status: number,
  headers: Record<string, string>,
  bodyBytes: number,
): number | null {
  if (status === 206 || status === 416) {
    const total = /^bytes\s+(?:\d+-\d+|\*)\/(\d+|\*)$/i.exec(
      headers["content-range"]?.trim() ?? "",
    );
    return total?.[1] === undefined ? null : bytesOf(total[1]);
  }
  if (status < 200 || status >= 300 || isCompressed(headers)) return null;
  return bytesOf(headers["content-length"]) ?? bodyBytes;
}
