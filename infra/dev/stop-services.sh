#!/usr/bin/env bash
# Stops the private PostgreSQL and Redis that services.sh started (data under .data/ stays).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ -f "$DATA/redis/redis.pid" ]; then kill "$(cat "$DATA/redis/redis.pid")" 2>/dev/null && say "Redis stopped" || true; fi
pg_dir="$(readlink -f "$DATA/postgres" 2>/dev/null || true)"
if [ -n "$pg_dir" ] && [ -f "$pg_dir/data/postmaster.pid" ]; then
  bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  as=(); is_root && as=(runuser -u postgres -- env -C /)
  "${as[@]}" "$bindir/pg_ctl" -D "$pg_dir/data" stop -m fast >/dev/null && say "PostgreSQL stopped"
fi
