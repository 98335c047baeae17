# Shared helpers for the dev/CI scripts. Sourced, not run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$ROOT/.data"
mkdir -p "$DATA"

say() { printf '\033[1;34m[thaw]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[thaw] error:\033[0m %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" = 0 ]; }

# True when something accepts TCP connections on host:port.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# Installs Debian packages when missing (only as root; otherwise says what to run).
apt_ensure() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  is_root || die "missing system packages: ${missing[*]}. Run: sudo apt-get install -y ${missing[*]} (or set DATABASE_URL / REDIS_URL to servers you already run)."
  say "installing ${missing[*]} (apt)"
  if [ ! -f "$DATA/.apt-updated" ]; then apt-get update -qq >&2 && touch "$DATA/.apt-updated"; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

# Node 20.19+ and pnpm 10 (installed with npm when missing).
ensure_node_and_pnpm() {
  command -v node >/dev/null || die "Node.js 20.19+ is required (https://nodejs.org or apt-get install nodejs)."
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
    || die "Node.js $(node --version) is too old: Thaw needs 20.19 or later."
  if ! command -v pnpm >/dev/null || [[ "$(pnpm --version)" != 10.* ]]; then
    say "installing pnpm 10 (npm i -g pnpm@10)"
    npm i -g pnpm@10 >&2 || die "could not install pnpm; run 'npm i -g pnpm@10' (or 'corepack enable') and try again."
  fi
  export NEXT_TELEMETRY_DISABLED=1
}

pnpm_install() {
  say "pnpm install"
  (cd "$ROOT" && CI=true pnpm install --frozen-lockfile --reporter=append-only >&2)
}

# Loads DATABASE_URL / REDIS_URL written by services.sh (explicit env wins).
load_service_env() {
  if [ -f "$DATA/services.env" ]; then
    local db="${DATABASE_URL:-}" redis="${REDIS_URL:-}"
    # shellcheck disable=SC1091
    source "$DATA/services.env"
    [ -n "$db" ] && export DATABASE_URL="$db"
    [ -n "$redis" ] && export REDIS_URL="$redis"
  fi
  export DATABASE_URL REDIS_URL
}

# A pinned Python tool in a venv of its own under .data/<name>: installs it when missing or
# of another version. Args: name, version, pip requirement, what it is (for messages).
ensure_python_tool() {
  local name=$1 version=$2 requirement=$3 what=$4
  local venv="$DATA/$name"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.version" 2>/dev/null)" = "$version" ]; then return 0; fi
  command -v python3 >/dev/null || apt_ensure python3
  python3 -c 'import venv, ensurepip' 2>/dev/null || apt_ensure python3-venv
  say "installing $name $version ($what) into .data/$name"
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || die "could not create a Python venv in $venv; install python3-venv and try again."
  "$venv/bin/pip" install -q "$requirement" >&2 \
    || die "could not install $requirement with pip (is PyPI reachable?)."
  echo "$version" > "$venv/.version"
}

# moto, the EC2 API emulator the fleet's aws provider is tested against (the tests start their
# own `moto_server` from THAW_MOTO_SERVER).
MOTO_VERSION=5.2.5
ensure_moto() {
  ensure_python_tool moto "$MOTO_VERSION" "moto[server]==$MOTO_VERSION" "EC2 emulator"
  export THAW_MOTO_SERVER="$DATA/moto/bin/moto_server"
}

# promtool, which checks and unit-tests infra/monitoring's Prometheus rules (the tests run it
# from THAW_PROMTOOL). Taken out of Debian's `prometheus` package without installing it, so no
# Prometheus server is set up or started on the machine.
ensure_promtool() {
  local dir="$DATA/prometheus-deb"
  if [ ! -x "$dir/usr/bin/promtool" ]; then
    if is_root && [ ! -f "$DATA/.apt-updated" ]; then apt-get update -qq >&2 && touch "$DATA/.apt-updated"; fi
    say "fetching promtool (Debian's prometheus package, unpacked into .data/prometheus-deb)"
    local tmp
    tmp=$(mktemp -d) && chmod 755 "$tmp" # apt fetches as _apt
    (cd "$tmp" && apt-get download -qq prometheus >&2) \
      || die "could not download Debian's prometheus package (apt-get download prometheus); run 'sudo apt-get update' and try again."
    rm -rf "$dir" && dpkg-deb -x "$tmp"/prometheus_*.deb "$dir" && rm -rf "$tmp"
  fi
  export THAW_PROMTOOL="$dir/usr/bin/promtool"
}

# The OpenTelemetry project's generated protobuf classes for OTLP (opentelemetry-proto): the
# tests' OTLP receiver decodes what the exporters send with them (THAW_OTLP_PYTHON runs it).
OTLP_PROTO_VERSION=1.45.2
ensure_otlp_proto() {
  ensure_python_tool otlp-proto "$OTLP_PROTO_VERSION" "opentelemetry-proto==$OTLP_PROTO_VERSION" "OTLP protobuf definitions"
  export THAW_OTLP_PYTHON="$DATA/otlp-proto/bin/python"
}

# schemathesis, the OpenAPI fuzzer the REST API is tested with (the fuzz test runs it from
# THAW_SCHEMATHESIS).
SCHEMATHESIS_VERSION=4.32.5
ensure_schemathesis() {
  ensure_python_tool schemathesis "$SCHEMATHESIS_VERSION" "schemathesis==$SCHEMATHESIS_VERSION" "OpenAPI fuzzer"
  export THAW_SCHEMATHESIS="$DATA/schemathesis/bin/schemathesis"
}
