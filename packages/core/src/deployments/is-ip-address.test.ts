import { isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isIpAddress } from "./source-policy.ts";

// The source policy decides "address or name" with ipaddr.js so that it runs in a browser;
// it used Node's net.isIP. Held to Node's answer (the reference) on every input, so that no
// text moves from the address checks to the name checks or back.
function agreesWithNode(text: string): void {
  expect(isIpAddress(text), text).toBe(isIP(text) !== 0);
}

const ipLike = fc.stringMatching(/^[0-9a-fA-FxX:.%]{0,45}$/);
const zone = fc.stringMatching(/^%[0-9a-zA-Z.:-]{0,6}$/);
const mappedTail = fc
  .tuple(fc.ipV4Extended(), fc.ipV6())
  .map(([v4, v6]) => `${v6.slice(0, v6.lastIndexOf(":") + 1)}${v4}`);

describe("isIpAddress", () => {
  it("agrees with net.isIP on addresses, odd spellings and near misses", () => {
    for (const text of [
      "127.0.0.1",
      "1.2.3",
      "0x7f.0.0.1",
      "010.0.0.1",
      "256.1.1.1",
      "::1",
      "::",
      "::ffff:127.0.0.1",
      "::ffff:01.2.3.4",
      "::ffff:0x7f.0.0.1",
      "::ffff:127.1",
      "fe80::1%eth0",
      "fe80::1%a.b",
      "1::%",
      "[::1]",
      "1:2:3:4:5:6:1.2.3.4",
      "1.2.3.4%eth0",
      "metadata.google.internal",
      "",
    ])
      agreesWithNode(text);
  });

  it("agrees with net.isIP on generated text", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.ipV4(),
          fc.ipV4Extended(),
          fc.ipV6(),
          mappedTail,
          fc.tuple(fc.ipV6(), zone).map(([a, z]) => a + z),
          ipLike,
        ),
        agreesWithNode,
      ),
      { numRuns: 5_000 },
    );
  });
});
