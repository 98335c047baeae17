#!/bin/bash
# thaw-imds-firewall — no task of the agent's containerd namespace reaches the EC2 instance
# metadata service (issue 23, finding 12). Installed as /usr/local/sbin/thaw-imds-firewall by
# cloud-init and run at every boot by thaw-imds-firewall.service, before containerd.
#
# Tenant containers share the host network (their engines answer on 127.0.0.1), so the
# launch's hop limit of 1 does not keep them from 169.254.169.254: the kernel does, by cgroup.
# containerd's runc shim (cgroupfs driver, as ctr creates containers) puts every task in
# /<namespace>/<container id> of the unified hierarchy, so one rule on /<namespace> covers
# them all, descendants included. The cgroup match resolves its path when the rule is
# inserted (a missing cgroup is "Invalid argument"), so the namespace's cgroup is created first:
# on a fresh host no task has run yet. Idempotent: a rule already in place is left alone.
set -euo pipefail
NAMESPACE=thaw # the agent's containerd namespace (THAW_CONTAINERD_NAMESPACE's default)
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] ||
  { echo "thaw-imds-firewall: needs the unified cgroup hierarchy (cgroup v2) at /sys/fs/cgroup" >&2; exit 1; }
mkdir -p "/sys/fs/cgroup/$NAMESPACE"
reject() { # iptables|ip6tables destination
  local rule=(OUTPUT -d "$2" -m cgroup --path "$NAMESPACE" -j REJECT)
  "$1" -C "${rule[@]}" 2>/dev/null || "$1" -I "${rule[@]}"
}
reject iptables 169.254.169.254/32
reject ip6tables fd00:ec2::254/128
