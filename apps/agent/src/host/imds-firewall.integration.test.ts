import { spawnSync } from "node:child_process";
import { existsSync, statfsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The GPU hosts' metadata firewall (infra/cloud-init/scripts/thaw-imds-firewall.sh, issue 23
// finding 12) run for real, in a network and mount namespace of its own: on a host where no
// task has run yet, twice (as at every boot), then a process in a task's cgroup and one
// outside it call a metadata service on 169.254.169.254.

const SCRIPT = fileURLToPath(
  new URL("../../../../infra/cloud-init/scripts/thaw-imds-firewall.sh", import.meta.url),
);
const CGROUP2_MAGIC = 0x63677270;
/** Where this machine mounts the unified hierarchy (cgroup v2 hosts: /sys/fs/cgroup itself). */
const unified = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].find((dir) => {
  try {
    return statfsSync(dir).type === CGROUP2_MAGIC;
  } catch {
    return false;
  }
});
const tools = ["unshare", "iptables", "ip6tables", "ip", "python3"].every(
  (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0,
);
const runnable = process.getuid?.() === 0 && unified !== undefined && tools;
if (!runnable) console.warn("IMDS firewall test skipped: needs root, cgroup v2, unshare, iptables");

const PROBE = `python3 -c '
import urllib.request
try:
    urllib.request.urlopen("http://169.254.169.254/", timeout=3); print("reached")
except Exception as e:
    print("refused" if "refused" in str(e) else "error: %s" % e)'`;

describe.skipIf(!runnable)("thaw-imds-firewall", () => {
  it("installs on a fresh host, survives a second run, and keeps only tasks from IMDS", () => {
    const thaw = `${unified}/thaw`;
    // A fresh host: no task has run, so the namespace's cgroup does not exist yet.
    spawnSync("rmdir", [`${thaw}/replica-test`, thaw]);
    expect(existsSync(thaw)).toBe(false);
    const driver = `
      set -eu
      mount --make-rprivate /
      # The script looks for cgroup v2 at /sys/fs/cgroup, as on the GPU hosts.
      [ "${unified}" = /sys/fs/cgroup ] || mount --bind "${unified}" /sys/fs/cgroup
      bash "${SCRIPT}"
      bash "${SCRIPT}"
      echo "v4 rules: $(iptables -S OUTPUT | grep -c -- '-d 169.254.169.254/32 -m cgroup --path thaw -j REJECT')"
      echo "v6 rules: $(ip6tables -S OUTPUT | grep -c -- '-d fd00:ec2::254/128 -m cgroup --path thaw -j REJECT')"
      ip link set lo up
      ip addr add 169.254.169.254/32 dev lo
      python3 -m http.server --bind 169.254.169.254 80 >/dev/null 2>&1 &
      server=$!
      for _ in $(seq 50); do ${PROBE} | grep -q reached && break; sleep 0.1; done
      echo "host: $(${PROBE})"
      mkdir -p /sys/fs/cgroup/thaw/replica-test
      echo "task: $(sh -c 'echo $$ > /sys/fs/cgroup/thaw/replica-test/cgroup.procs; exec ${PROBE.replace(/'/g, `'"'"'`)}')"
      kill $server
    `;
    const result = spawnSync("unshare", ["-m", "-n", "bash", "-c", driver], {
      encoding: "utf8",
      timeout: 60_000,
    });
    try {
      expect(result.stderr).toBe("");
      expect(result.stdout.trim().split("\n")).toEqual([
        "v4 rules: 1",
        "v6 rules: 1",
        "host: reached",
        "task: refused",
      ]);
    } finally {
      spawnSync("rmdir", [`${thaw}/replica-test`, thaw]);
    }
  });
});
