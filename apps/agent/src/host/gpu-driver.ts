import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * The NVIDIA driver and CUDA versions of this host, from nvidia-smi. Snapshots are bound
 * to them, so a host that cannot tell reports neither (the scheduler then never restores
 * a snapshot onto it) rather than a guess.
 */
export async function detectGpuDriver(
  nvidiaSmi = "nvidia-smi",
): Promise<{ driverVersion?: string; cudaVersion?: string }> {
  try {
    const { stdout } = await run(nvidiaSmi, [], { timeout: 10_000 });
    const driver = /Driver Version:\s*([0-9.]+)/.exec(stdout)?.[1];
    const cuda = /CUDA Version:\s*([0-9.]+)/.exec(stdout)?.[1];
    return { ...(driver ? { driverVersion: driver } : {}), ...(cuda ? { cudaVersion: cuda } : {}) };
  } catch {
    return {};
  }
}
