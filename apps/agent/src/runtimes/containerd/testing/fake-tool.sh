#!/bin/bash
# Fake ctr / ctr-remote / criu / cuda-checkpoint for the runtime unit tests (see fake-tools.ts).
tool=$(basename "$0")
S="$FAKE_STATE"
# One write per call: calls run at once (a restore stages weights beside CRIU), and separate
# writes from two processes would interleave in the log.
line="$tool"; for a in "$@"; do line="$line"$'\t'"$a"; done
printf '%s\n' "$line" >> "$S/calls.log"
joined="$tool $*"
if [ -f "$S/fail" ]; then
  while IFS=$'\t' read -r ftool fmatch fmsg fgone; do
    if [ "$ftool" = "$tool" ] && [[ "$joined" == *"$fmatch"* ]]; then
      # A race the test stages: something else removed this task just before the call failed.
      [ -n "$fgone" ] && rm -f "$S/tasks/$fgone"
      echo "$fmsg" >&2
      exit 1
    fi
  done < "$S/fail"
fi
mkdir -p "$S/tasks" "$S/containers" "$S/cuda"
touch "$S/images.txt"
last() { echo "${@: -1}"; }

case "$tool" in
criu)
  [ "$1" = "check" ] && echo "Looks good."
  exit 0 ;;
cuda-checkpoint)
  pid="$3"
  for p in $FAKE_NON_CUDA_PIDS; do
    if [ "$p" = "$pid" ]; then echo "cuda-checkpoint: process $pid is not a CUDA process" >&2; exit 1; fi
  done
  state=$(cat "$S/cuda/$pid" 2>/dev/null || echo "$FAKE_CUDA_STATE")
  case "$1" in
    --get-state) echo "$state" ;;
    --toggle) if [ "$state" = running ]; then echo checkpointed > "$S/cuda/$pid"; else echo running > "$S/cuda/$pid"; fi ;;
  esac
  exit 0 ;;
esac

# ctr and ctr-remote: drop the global flags (-a <sock> -n <namespace>).
while [ "$1" = "-a" ] || [ "$1" = "-n" ]; do shift 2; done
group="$1"; verb="$2"; shift 2
if [ "$group" = "run" ]; then
  # `ctr run --detach --log-uri <uri> <create flags> -- image id args`: the container as
  # `containers create` keeps it (below), and its task started.
  set -- "$verb" "$@"
  created=""
  while [[ "$1" == --* ]]; do
    case "$1" in
      --) shift; break ;;
      --detach) shift ;;
      --net-host | --seccomp) created="$created $1"; shift ;;
      --log-uri | --label) shift 2 ;;
      *) created="$created $1 $2"; shift 2 ;;
    esac
  done
  image="$1"; id="$2"; shift 2
  mkdir -p "$S/containers" "$S/tasks"
  echo "$image$created $*" > "$S/containers/$id"
  if [ -n "$FAKE_TASK_EXITS" ]; then echo STOPPED; else echo RUNNING; fi > "$S/tasks/$id"
  exit 0
fi
add_image() { # ref [labels]
  digest=$(awk -v r="$1" '$1==r {print $2}' "$S/registry.txt")
  [ -z "$digest" ] && { echo "ctr: failed to resolve reference \"$1\": $1: not found" >&2; exit 1; }
  grep -v "^$1 " "$S/images.txt" > "$S/images.tmp"; mv "$S/images.tmp" "$S/images.txt"
  echo "$1 $digest ${2:--}" >> "$S/images.txt"
}
case "$group $verb" in
  "images pull") add_image "$(last "$@")"; echo "unpacking linux/amd64 sha256:0..."; echo "done: 1.5ms" ;;
  "images rpull") add_image "$(last "$@")" "thaw.estargz=true" ;;
  "content fetch")
    # A kernel cache is labelled as such (its --label); a checkpoint with the test's snapshot id.
    label="thaw.snapshot-id=$FAKE_SNAPSHOT_ID"
    for a in "$@"; do [[ "$a" == thaw.kernel-cache-id=* ]] && label="$a"; done
    add_image "$(last "$@")" "$label" ;;
  "images ls")
    if [ "$1" = "-q" ]; then awk '{print $1}' "$S/images.txt"; exit 0; fi
    echo "REF TYPE DIGEST SIZE PLATFORMS LABELS"
    want="${1#name==}"
    while read -r ref digest labels; do
      if [ -z "$1" ] || [ "$ref" = "$want" ]; then
        echo "$ref application/vnd.oci.image.manifest.v1+json $digest 1.0 KiB linux/amd64 $labels"
      fi
    done < "$S/images.txt" ;;
  "images label"|"images push") : ;;
  "images rm")
    grep -v "^$1 " "$S/images.txt" > "$S/images.tmp"; mv "$S/images.tmp" "$S/images.txt" ;;
  "images import")
    # An OCI image-layout tar on stdin (kept for the test): the image its index names, by the
    # manifest's digest; its blobs into the content store.
    cat > "$S/imported.tar"
    index=$(tar -xOf "$S/imported.tar" index.json) || { echo "ctr: no index.json in the archive" >&2; exit 1; }
    name=$(printf '%s' "$index" | grep -o '"io.containerd.image.name":"[^"]*"' | cut -d'"' -f4)
    digest=$(printf '%s' "$index" | grep -o '"digest":"sha256:[0-9a-f]*"' | head -1 | cut -d'"' -f4)
    mkdir -p "$S/imported" && tar -xf "$S/imported.tar" -C "$S/imported"
    for b in "$S"/imported/blobs/sha256/*; do cp "$b" "$S/blobs/sha256:$(basename "$b")"; done
    grep -v "^$name " "$S/images.txt" > "$S/images.tmp"; mv "$S/images.tmp" "$S/images.txt"
    echo "$name $digest -" >> "$S/images.txt"
    echo "unpacking $name ($digest)...skip" ;;
  "images mount")
    # A read-only view of the image: the files a test gave it (imageFiles), copied.
    grep -q "^$1 " "$S/images.txt" || { echo "ctr: image \"$1\": not found" >&2; exit 1; }
    src="$S/rootfs/$(printf '%s' "$1" | tr '/:@' '___')"
    [ -d "$src" ] && cp -r "$src/." "$2/"
    echo "$2" >> "$S/mounts.txt" ;;
  "images unmount")
    target="$(last "$@")"
    grep -qx "$target" "$S/mounts.txt" 2>/dev/null || { echo "ctr: $target: not mounted" >&2; exit 1; }
    find "$target" -mindepth 1 -delete ;;
  "content ls") cat "$S/content.txt" 2>/dev/null ;;
  "content get") cat "$S/blobs/$1" ;;
  "containers create")
    # The container keeps what it was created with (labels aside, as ctr's spec keeps them
    # apart): `containers info` prints it as the spec, so a test sees any difference.
    created=""
    while [[ "$1" == --* ]]; do
      case "$1" in
        --) shift; break ;;
        --net-host | --seccomp) created="$created $1"; shift ;;
        --label) shift 2 ;;
        *) created="$created $1 $2"; shift 2 ;;
      esac
    done
    image="$1"; id="$2"; shift 2
    echo "$image$created $*" > "$S/containers/$id" ;;
  "containers info")
    [ -f "$S/containers/$1" ] || { echo "ctr: container \"$1\" in namespace \"thaw\": not found" >&2; exit 1; }
    printf '{"ID":"%s","Runtime":{"Name":"io.containerd.runc.v2","Options":{"type_url":"containerd.runc.v1.Options"}},"Spec":{"linux":{"cgroupsPath":"/thaw/%s"},"annotations":{"thaw.replica-id":"%s"},"process":{"env":["HOSTNAME=%s"]},"created":"%s"}}\n' \
      "$1" "$1" "$1" "$FAKE_HOSTNAME" "$(cat "$S/containers/$1")" ;;
  "containers ls") ls "$S/containers" ;;
  "containers delete") rm -f "$S/containers/$1" ;;
  "containers restore") id="${@: -2:1}"; touch "$S/containers/$id"; echo RUNNING > "$S/tasks/$id" ;;
  "containers checkpoint") echo "$(last "$@") sha256:$(printf 'c%.0s' {1..64}) -" >> "$S/images.txt" ;;
  "tasks start") if [ -n "$FAKE_TASK_EXITS" ]; then echo STOPPED; else echo RUNNING; fi > "$S/tasks/$(last "$@")" ;;
  "tasks pause") echo PAUSED > "$S/tasks/$1" ;;
  "tasks resume") echo RUNNING > "$S/tasks/$1" ;;
  "tasks kill") echo STOPPED > "$S/tasks/$(last "$@")" ;;
  "tasks delete") rm -f "$S/tasks/$1" ;;
  "tasks ls")
    echo "TASK    PID      STATUS"
    for f in "$S"/tasks/*; do [ -f "$f" ] && echo "$(basename "$f")    ${FAKE_PIDS%% *}    $(cat "$f")"; done ;;
  "tasks ps")
    echo "PID      INFO"
    for p in $FAKE_PIDS; do echo "$p      -"; done ;;
  *) echo "fake $tool: unexpected command: $group $verb $*" >&2; exit 2 ;;
esac
exit 0
