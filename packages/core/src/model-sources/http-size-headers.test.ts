import { describe, expect, it } from "vitest";
import { sizeFromHead, sizeFromRangedGet } from "./http-size-headers.ts";

describe("sizeFromHead", () => {
  it("reads Content-Length from a 2xx", () => {
    expect(sizeFromHead(200, { "content-length": "16060522496" })).toBe(16_060_522_496);
  });
  it("gives nothing for a refusal, a missing or odd length, or a compressed body", () => {
    expect(sizeFromHead(403, { "content-length": "243" })).toBeNull();
    expect(sizeFromHead(200, {})).toBeNull();
    expect(sizeFromHead(200, { "content-length": "-1" })).toBeNull();
    expect(sizeFromHead(200, { "content-length": "12e3" })).toBeNull();
    expect(sizeFromHead(200, { "content-length": "99999999999999999" })).toBeNull();
    expect(sizeFromHead(200, { "content-length": "10", "content-encoding": "gzip" })).toBeNull();
    expect(sizeFromHead(200, { "content-length": "10", "content-encoding": "identity" })).toBe(10);
  });
});

describe("sizeFromRangedGet", () => {
  it("reads the total of a 206's Content-Range", () => {
    expect(sizeFromRangedGet(206, { "content-range": "bytes 0-0/4920734080" }, 1)).toBe(
      4_920_734_080,
    );
    expect(sizeFromRangedGet(206, { "content-range": "bytes 0-0/*" }, 1)).toBeNull();
    expect(sizeFromRangedGet(206, {}, 1)).toBeNull();
  });
  it("reads an empty file's 416", () => {
    expect(sizeFromRangedGet(416, { "content-range": "bytes */0" }, 0)).toBe(0);
  });
  it("takes a whole small body from a server that ignores Range", () => {
    expect(sizeFromRangedGet(200, { "content-length": "12" }, 12)).toBe(12);
    expect(sizeFromRangedGet(200, {}, 7)).toBe(7);
    expect(sizeFromRangedGet(200, { "content-encoding": "br" }, 7)).toBeNull();
  });
  it("gives nothing for a refusal", () => {
    expect(sizeFromRangedGet(403, { "content-length": "243" }, 243)).toBeNull();
  });
});
