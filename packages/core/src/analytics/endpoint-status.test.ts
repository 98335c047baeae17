import { describe, expect, it } from "vitest";
import { endpointStatus } from "./endpoint-status.ts";

const replicas = { ready: 0, warm: 0, starting: 0, draining: 0 };

describe("endpointStatus", () => {
  it("names what the endpoint is doing", () => {
    expect(endpointStatus({ desired: 0, ...replicas })).toBe("scaled_to_zero");
    expect(endpointStatus({ desired: 0, ...replicas, warm: 1 })).toBe("scaled_to_zero");
    expect(endpointStatus({ desired: 2, ...replicas, ready: 2 })).toBe("ready");
    expect(endpointStatus({ desired: 2, ...replicas, ready: 1, starting: 1 })).toBe("scaling_up");
    expect(endpointStatus({ desired: 1, ...replicas, ready: 2 })).toBe("scaling_down");
    expect(endpointStatus({ desired: 1, ...replicas, ready: 1, draining: 1 })).toBe("scaling_down");
    expect(endpointStatus({ desired: 0, ...replicas, draining: 1 })).toBe("scaling_down");
  });
});
