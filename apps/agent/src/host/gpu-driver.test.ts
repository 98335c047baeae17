import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectGpuDriver } from "./gpu-driver.ts";

function fakeSmi(output: string, exitCode = 0): string {
  const dir = mkdtempSync(path.join(tmpdir(), "thaw-smi-"));
  const file = path.join(dir, "nvidia-smi");
  writeFileSync(file, `#!/bin/sh\ncat <<'OUT'\n${output}\nOUT\nexit ${exitCode}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe("detectGpuDriver", () => {
  it("reads the driver and CUDA versions from nvidia-smi's banner", async () => {
    const smi = fakeSmi(
      "| NVIDIA-SMI 570.133.20   Driver Version: 570.133.20   CUDA Version: 12.8     |",
    );
    await expect(detectGpuDriver(smi)).resolves.toEqual({
      driverVersion: "570.133.20",
      cudaVersion: "12.8",
    });
  });

  it("reports nothing when nvidia-smi fails or is missing", async () => {
    await expect(detectGpuDriver(fakeSmi("NVIDIA-SMI has failed", 9))).resolves.toEqual({});
    await expect(detectGpuDriver("/nonexistent/nvidia-smi")).resolves.toEqual({});
  });
});
