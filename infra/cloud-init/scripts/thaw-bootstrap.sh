#!/bin/bash
# thaw-bootstrap — turns a fresh Ubuntu 22.04/24.04 EC2 GPU instance into a Thaw node.
# Installed as /usr/local/sbin/thaw-bootstrap by cloud-init (infra/cloud-init/gpu-host.yaml)
# and run once from its runcmd; output in /var/log/cloud-init-output.log.
#
#   1. this instance's identity from IMDSv2 (the launch sets HttpTokens=required);
#   2. the metadata firewall (thaw-imds-firewall: no task of containerd's reaches IMDS), and
#      the data volume (thaw-data-volume) before anything writes to /var/lib/containerd;
#   3. the NVIDIA driver when the AMI has none, the NVIDIA container toolkit (ctr --gpus),
#      fabric manager on NVSwitch types, containerd + runc, CRIU (>= 4, PPA), fuse3,
#      stargz-snapshotter from its release tarball, cuda-checkpoint (each SHA-256 pinned);
#   4. Node.js (SHA-256 pinned) and the agent bundle (/opt/thaw), the agent's per-instance settings;
#   5. sysctl, then stargz-snapshotter, containerd and the agent (infra/agent/thaw-agent.service).
# Any failure stops here: the node never joins, and the fleet worker retires it after its
# boot timeout. The configuration files themselves were written by cloud-init (write_files).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# Pinned versions. Bump them here, then re-render gpu-host.yaml (infra/cloud-init/render.mjs).
# Each download is checked against a SHA-256 the operator pinned for exactly this version
# (fleet config aws.toolChecksums → /etc/thaw/bootstrap.env; infra/README.md), never against a
# checksum fetched from the same origin as the file: a mismatch, or no checksum, stops here.
NODE_VERSION=20.20.2 # node-v${NODE_VERSION}-linux-x64.tar.xz: NODE_SHA256
STARGZ_VERSION=v0.19.1 # stargz-snapshotter-${STARGZ_VERSION}-linux-amd64.tar.gz: STARGZ_SHA256
NVIDIA_DRIVER_BRANCH=570
# NVIDIA/cuda-checkpoint at a fixed commit (the binary lives in the repository):
# bin/x86_64_Linux/cuda-checkpoint at this commit: CUDA_CHECKPOINT_SHA256.
CUDA_CHECKPOINT_REF=6ec728aff032c18c9fb0794a272d94c6adcce508
AGENT_PORT=7070

log() { echo "thaw-bootstrap: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}
fetch() { curl -fsSL --retry 5 --retry-delay 2 --retry-connrefused "$@"; }
apt_install() {
  apt-get install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}
# A KEY=value line of /etc/thaw/bootstrap.env, read literally (never sourced: the values come
# from the provisioner and must not be able to run anything).
setting() { sed -n "s/^$1=//p" /etc/thaw/bootstrap.env | tail -n1; }
# A pinned SHA-256 from bootstrap.env: 64 hex digits, or the bootstrap stops.
pinned_sha256() {
  local value
  value=$(setting "$1")
  [[ "$value" =~ ^[0-9a-f]{64}$ ]] || die "$1 must be the pinned SHA-256 (64 hex digits) of $2 (infra/README.md: toolChecksums)"
  echo "$value"
}
# Fails closed: a file that is not the pinned one is never installed.
verify_sha256() { echo "$1  $2" | sha256sum -c --quiet - || die "$(basename "$2"): SHA-256 mismatch (want $1)"; }

[ "$(id -u)" -eq 0 ] || die "run as root"
# A placeholder the provisioner left unfilled would only surface later, as a bad agent setting.
if grep -l '\$[{]THAW_' /etc/thaw/agent.env /etc/thaw/bootstrap.env /var/lib/thaw-agent/join-token; then
  die "the files above still hold unfilled THAW_ placeholders (infra/cloud-init/render.mjs)"
fi
[ "$(dpkg --print-architecture)" = amd64 ] || die "only x86_64 GPU instances are supported"
# Read (and checked) before anything is installed: a host without them never gets further.
NODE_SHA256=$(pinned_sha256 NODE_SHA256 "node-v${NODE_VERSION}-linux-x64.tar.xz")
STARGZ_SHA256=$(pinned_sha256 STARGZ_SHA256 "stargz-snapshotter-${STARGZ_VERSION}-linux-amd64.tar.gz")
CUDA_CHECKPOINT_SHA256=$(pinned_sha256 CUDA_CHECKPOINT_SHA256 "cuda-checkpoint at ${CUDA_CHECKPOINT_REF}")

# ─── 1. identity (IMDSv2) ─────────────────────────────────────────────────────────────────
imds_token=$(curl -fsS --retry 5 --retry-connrefused -X PUT http://169.254.169.254/latest/api/token \
  -H "X-aws-ec2-metadata-token-ttl-seconds: 600")
imds() {
  curl -fsS --retry 5 --retry-connrefused -H "X-aws-ec2-metadata-token: $imds_token" \
    "http://169.254.169.254/latest/meta-data/$1"
}
instance_id=$(imds instance-id)
instance_type=$(imds instance-type)
zone=$(imds placement/availability-zone)
private_ip=$(imds local-ipv4)
log "instance $instance_id ($instance_type) in $zone at $private_ip"

# ─── 2. the metadata firewall and the data volume ─────────────────────────────────────────
apt-get update -q
apt_install ca-certificates curl gnupg mdadm xfsprogs software-properties-common iptables
systemctl daemon-reload
# Tenant containers share the host network (their engines answer on 127.0.0.1): the hop
# limit cannot keep them from IMDS, so the kernel does (thaw-imds-firewall). A unit, not a
# command here: the rules come back at every boot, and containerd starts only after them.
systemctl enable --now thaw-imds-firewall.service
systemctl enable --now thaw-data-volume.service

# ─── 3. GPU driver, container runtime, CRIU, stargz-snapshotter ───────────────────────────
if ! command -v nvidia-smi >/dev/null; then
  log "no NVIDIA driver on this AMI: installing the ${NVIDIA_DRIVER_BRANCH}-server branch"
  apt_install ubuntu-drivers-common
  ubuntu-drivers install --gpgpu "nvidia:${NVIDIA_DRIVER_BRANCH}-server"
  apt_install "nvidia-utils-${NVIDIA_DRIVER_BRANCH}-server"
fi
# NVSwitch systems (p4d, p4de, p5*) run no CUDA without fabric manager at the driver's version.
case "$instance_type" in
  p4d.* | p4de.* | p5.* | p5e.* | p5en.*)
    if ! systemctl cat nvidia-fabricmanager.service >/dev/null 2>&1; then
      apt_install "nvidia-fabricmanager-${NVIDIA_DRIVER_BRANCH}"
    fi
    systemctl enable nvidia-fabricmanager.service
    ;;
esac

# NVIDIA container toolkit: nvidia-container-cli, which `ctr … --gpus N` calls. containerd's
# config is not touched (nvidia-ctk runtime configure is for the CRI, which Thaw disables).
fetch https://nvidia.github.io/libnvidia-container/gpgkey |
  gpg --batch --yes --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg
echo "deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://nvidia.github.io/libnvidia-container/stable/deb/\$(ARCH) /" \
  >/etc/apt/sources.list.d/nvidia-container-toolkit.list
# CRIU >= 4 (infra/agent/criu/runc.conf uses recent options; Ubuntu's archive is older).
add-apt-repository -y -n ppa:criu/ppa
apt-get update -q
packages=(nvidia-container-toolkit criu fuse3)
# An AMI with Docker's containerd.io already has containerd: keep it.
command -v containerd >/dev/null || packages+=(containerd runc)
apt_install "${packages[@]}"

tarball="stargz-snapshotter-${STARGZ_VERSION}-linux-amd64.tar.gz"
release="https://github.com/containerd/stargz-snapshotter/releases/download/${STARGZ_VERSION}"
work=$(mktemp -d)
fetch -o "$work/$tarball" "$release/$tarball"
verify_sha256 "$STARGZ_SHA256" "$work/$tarball"
tar -C /usr/local/bin -xzf "$work/$tarball" containerd-stargz-grpc ctr-remote
registry_host=$(setting REGISTRY_HOST)
if [ -n "$registry_host" ]; then
  [[ "$registry_host" =~ ^[A-Za-z0-9.-]+(:[0-9]+)?$ ]] || die "REGISTRY_HOST '$registry_host' is not host[:port]"
  sed -i "s/@REGISTRY_HOST@/$registry_host/g" /etc/containerd-stargz-grpc/config.toml
fi

if ! command -v cuda-checkpoint >/dev/null; then
  if fetch -o "$work/cuda-checkpoint" \
    "https://raw.githubusercontent.com/NVIDIA/cuda-checkpoint/${CUDA_CHECKPOINT_REF}/bin/x86_64_Linux/cuda-checkpoint"; then
    verify_sha256 "$CUDA_CHECKPOINT_SHA256" "$work/cuda-checkpoint"
    install -m 0755 "$work/cuda-checkpoint" /usr/local/bin/cuda-checkpoint
  else
    log "warning: no cuda-checkpoint; this host will refuse restores and snapshot captures"
  fi
fi
criu check >/dev/null 2>&1 || log "warning: 'criu check' fails on this kernel; restores will fail"

# ─── 4. Node.js and the agent ─────────────────────────────────────────────────────────────
node_ok() { [ -x /usr/bin/node ] && /usr/bin/node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)'; }
if ! node_ok; then
  [ -e /usr/bin/node ] && [ ! -L /usr/bin/node ] && die "/usr/bin/node is older than 20.19 and not ours; remove the AMI's nodejs package"
  node_tar="node-v${NODE_VERSION}-linux-x64.tar.xz"
  fetch -o "$work/$node_tar" "https://nodejs.org/dist/v${NODE_VERSION}/$node_tar"
  verify_sha256 "$NODE_SHA256" "$work/$node_tar"
  mkdir -p /usr/local/lib/nodejs
  tar -C /usr/local/lib/nodejs -xJf "$work/$node_tar"
  ln -sfn "/usr/local/lib/nodejs/node-v${NODE_VERSION}-linux-x64/bin/node" /usr/bin/node
fi

bundle_url=$(setting AGENT_BUNDLE_URL)
bundle_sha256=$(setting AGENT_BUNDLE_SHA256)
[ -n "$bundle_url" ] || die "AGENT_BUNDLE_URL is empty (infra/README.md: the agent bundle)"
[[ "$bundle_sha256" =~ ^[0-9a-f]{64}$ ]] || die "AGENT_BUNDLE_SHA256 must be the bundle's sha256 (64 hex digits)"
fetch -o "$work/thaw-agent-bundle.tar.gz" "$bundle_url"
echo "$bundle_sha256  $work/thaw-agent-bundle.tar.gz" | sha256sum -c --quiet - || die "agent bundle: checksum mismatch"
rm -rf /opt/thaw
tar -C /opt -xzf "$work/thaw-agent-bundle.tar.gz"
[ -f /opt/thaw/apps/agent/src/main.ts ] || die "the agent bundle has no thaw/apps/agent/src/main.ts"
rm -rf "$work"

# The agent reports the published figures of its instance type; a type it does not know
# makes it exit at start, so say it here in words.
grep -q "\"$instance_type\": {" /opt/thaw/packages/core/src/cold-start-model/host-profiles.ts ||
  die "instance type $instance_type has no host profile (infra/README.md: adding an instance type)"

# This instance's identity, appended to the settings cloud-init wrote. The node's name is the
# EC2 instance id too; the instance id lets a host that lost its credential rejoin as the same
# node and the fleet worker match node rows to instances. The scheduler calls the agent at
# the private address.
cat >>/etc/thaw/agent.env <<EOF
THAW_AGENT_INSTANCE_ID=$instance_id
THAW_AGENT_HOST_NAME=$instance_id
THAW_AGENT_INSTANCE_TYPE=$instance_type
THAW_AGENT_ZONE=$zone
THAW_AGENT_ADVERTISE_URL=https://$private_ip:$AGENT_PORT
EOF
# The unit's ProtectSystem=strict allows writes only where it lists: create what it expects.
install -d -m 0700 /var/log/thaw

# ─── 5. kernel settings and services ──────────────────────────────────────────────────────
sysctl --system >/dev/null || log "warning: some sysctl settings were refused (kernel.io_uring_disabled needs Linux 6.6+)"
modprobe fuse
systemctl daemon-reload
systemctl enable --now stargz-snapshotter.service
systemctl restart containerd.service
systemctl enable thaw-agent.service

if ! nvidia-smi >/dev/null 2>&1 && ! { modprobe nvidia && nvidia-smi >/dev/null 2>&1; }; then
  log "the NVIDIA driver is installed but not loaded: rebooting (the agent starts at boot)"
  systemctl reboot
  exit 0
fi
systemctl start thaw-agent.service
log "done: the agent joins $(grep -m1 '^THAW_CONTROL_PLANE_URL=' /etc/thaw/agent.env | cut -d= -f2-)"
