#!/usr/bin/env bash
# Runs a command with the dev services' environment (.data/services.env: DATABASE_URL,
# REDIS_URL) unless those are already set — for the benchmark commands of bench-contracts.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [ -z "${DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  if [ ! -f "$ROOT/.data/services.env" ]; then
    echo "DATABASE_URL / REDIS_URL are not set and .data/services.env is missing: run 'bash infra/dev/services.sh' first." >&2
    exit 2
  fi
  set -a
  # shellcheck disable=SC1091
  . "$ROOT/.data/services.env"
  set +a
fi
exec "$@"
