import { describe, expect, it } from "vitest";
import { GpuLedger } from "./gpu-ledger.ts";

describe("GpuLedger", () => {
  it("refuses a GPU the host does not have, or one another replica holds", () => {
    const ledger = new GpuLedger(2);
    expect(ledger.refusal([2], "r1", undefined)).toEqual({
      code: "gpu_unavailable",
      message: "GPU 2 does not exist on this host (2 GPUs)",
    });
    ledger.hold("r1", [0]);
    expect(ledger.refusal([0], "r2", undefined)).toEqual({
      code: "gpu_busy",
      message: "GPU 0 is held by replica r1",
    });
    expect(ledger.refusal([1], "r2", undefined)).toBeUndefined();
  });

  it("lets a replica take over the GPUs of the parked replica it hands over from", () => {
    const ledger = new GpuLedger(2);
    ledger.hold("parked", [0, 1]);
    expect(ledger.refusal([0, 1], "taking-over", "parked")).toBeUndefined();
    ledger.hold("taking-over", [0, 1]);
    // The parked replica's release no longer frees what it passed on.
    ledger.release("parked", [0, 1]);
    expect(ledger.held()).toEqual([
      { index: 0, replicaId: "taking-over" },
      { index: 1, replicaId: "taking-over" },
    ]);
    expect({ used: ledger.used, free: ledger.free }).toEqual({ used: 2, free: 0 });
    ledger.release("taking-over", [1, 0]);
    expect({ used: ledger.used, free: ledger.free, held: ledger.held() }).toEqual({
      used: 0,
      free: 2,
      held: [],
    });
  });
});
