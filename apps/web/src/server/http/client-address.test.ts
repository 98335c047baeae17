import { describe, expect, it } from "vitest";
import { clientAddress, parseCidrList } from "./client-address.ts";

const lb = parseCidrList("10.0.0.0/8, fd00::/8");

describe("client address", () => {
  it("is the TCP peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress("203.0.113.7", "1.2.3.4", [])).toBe("203.0.113.7");
    expect(clientAddress("::ffff:203.0.113.7", undefined, [])).toBe("203.0.113.7");
  });

  it("walks X-Forwarded-For from the right through trusted proxies only", () => {
    expect(clientAddress("10.1.2.3", "198.51.100.9", lb)).toBe("198.51.100.9");
    // A client-prepended hop is left of the one the proxy appended: it is never reached.
    expect(clientAddress("10.1.2.3", "6.6.6.6, 198.51.100.9", lb)).toBe("198.51.100.9");
    // Two trusted hops (LB → ingress), then the client.
    expect(clientAddress("10.1.2.3", "198.51.100.9, 10.9.9.9", lb)).toBe("198.51.100.9");
    expect(clientAddress("10.1.2.3", ["198.51.100.9", "10.9.9.9"], lb)).toBe("198.51.100.9");
  });

  it("stops at an unreadable hop, and never trusts an untrusted peer's header", () => {
    expect(clientAddress("10.1.2.3", "garbage", lb)).toBe("10.1.2.3");
    expect(clientAddress("203.0.113.7", "10.0.0.1", lb)).toBe("203.0.113.7");
    expect(clientAddress(undefined, "1.2.3.4", lb)).toBe("unknown");
  });

  it("parses bare addresses and refuses junk", () => {
    expect(parseCidrList("127.0.0.1, ::1")).toHaveLength(2);
    expect(() => parseCidrList("10.0.0.0/99")).toThrow();
    expect(() => parseCidrList("nope")).toThrow();
  });
});
