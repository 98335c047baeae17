#!/bin/bash
# thaw-data-volume — puts containerd's and stargz-snapshotter's data on the host's fast disk.
# Installed as /usr/local/sbin/thaw-data-volume; run at every boot by thaw-data-volume.service,
# before containerd and the stargz snapshotter (their units require it).
#
# Which disk (the fleet worker attaches the gp3 data volume only to instance types that have
# no local NVMe it should use instead — apps/scheduler fleet config, localNvmeInstanceTypes):
#   1. an EBS volume besides the root volume (the gp3 data volume at 1,000 MiB/s, 16,000 IOPS);
#   2. else the instance-store NVMe disks: RAID 0 over all of them (one disk: used as it is);
#   3. else none: containerd stays on the root volume (a warning; pulls are then bound by the
#      root volume's throughput, 125 MiB/s for a default gp3).
# The filesystem (XFS, label thaw-data) is mounted at /var/lib/thaw-data, and
# /var/lib/containerd and /var/lib/containerd-stargz-grpc are bind mounts of directories on it.
# A disk that carries any other filesystem or partition table is never touched.
set -euo pipefail

MOUNT=/var/lib/thaw-data
LABEL=thaw-data
MD_DEVICE=/dev/md/thaw-data
BIND_DIRS=(/var/lib/containerd /var/lib/containerd-stargz-grpc)

log() { echo "thaw-data-volume: $*" >&2; }

bind_dirs() {
  local dir
  for dir in "${BIND_DIRS[@]}"; do
    mkdir -p "$MOUNT/${dir##*/}" "$dir"
    mountpoint -q "$dir" || mount --bind "$MOUNT/${dir##*/}" "$dir"
  done
}

# The whole disk the root filesystem lives on (e.g. nvme0n1), never a candidate.
root_disk() {
  lsblk -no PKNAME "$(findmnt -no SOURCE /)" | head -n1
}

# Whole disks (no partitions, no filesystem or RAID signature, not mounted) whose model is $1.
blank_disks() {
  local model=$1 name disk_model
  while read -r name disk_model; do
    [ "$name" = "$(root_disk)" ] && continue
    [[ "$disk_model" == "$model"* ]] || continue
    [ "$(lsblk -no NAME "/dev/$name" | wc -l)" -eq 1 ] || continue # has partitions
    blkid -p "/dev/$name" >/dev/null 2>&1 && continue               # has a signature
    echo "/dev/$name"
  done < <(lsblk -dn -o NAME,MODEL -e 7,11)
}

make_filesystem() { # device, extra mkfs.xfs options...
  local device=$1
  shift
  log "creating an XFS filesystem on $device"
  mkfs.xfs -q -L "$LABEL" "$@" "$device"
  udevadm settle
}

if mountpoint -q "$MOUNT"; then
  bind_dirs
  exit 0
fi
mkdir -p "$MOUNT"

# After a reboot: the filesystem exists already (an instance-store RAID is assembled by udev).
udevadm settle
mdadm --assemble --scan >/dev/null 2>&1 || true
device=$(blkid -L "$LABEL" 2>/dev/null || true)

if [ -z "$device" ]; then
  mapfile -t ebs < <(blank_disks "Amazon Elastic Block Store")
  mapfile -t nvme < <(blank_disks "Amazon EC2 NVMe Instance Storage")
  if [ "${#ebs[@]}" -gt 0 ]; then
    device=${ebs[0]}
    [ "${#ebs[@]}" -gt 1 ] && log "several blank EBS volumes (${ebs[*]}); using $device"
    # -K: no discard pass over a new EBS volume (it is already unallocated; it would only cost time).
    make_filesystem "$device" -K
  elif [ "${#nvme[@]}" -gt 1 ]; then
    log "RAID 0 over ${#nvme[@]} instance-store disks: ${nvme[*]}"
    mdadm --create "$MD_DEVICE" --name="$LABEL" --level=0 --raid-devices="${#nvme[@]}" \
      --chunk=512 --run "${nvme[@]}"
    mdadm --detail --brief "$MD_DEVICE" >>/etc/mdadm/mdadm.conf
    device=$MD_DEVICE
    make_filesystem "$device"
  elif [ "${#nvme[@]}" -eq 1 ]; then
    device=${nvme[0]}
    make_filesystem "$device"
  else
    log "warning: no data volume and no instance-store NVMe found; containerd stays on the root volume"
    exit 0
  fi
  device=$(blkid -L "$LABEL")
fi

log "mounting $device at $MOUNT"
mount -o noatime "$device" "$MOUNT"
bind_dirs
