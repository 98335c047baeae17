#!/usr/bin/env bash
# Makes sure a PostgreSQL and a Redis (maxmemory-policy noeviction) are reachable, then
# migrates and seeds. Uses DATABASE_URL / REDIS_URL when they are set and reachable;
# otherwise installs the servers (apt, as root) and runs private ones with their data under
# .data/. Idempotent: a second run finds everything up and changes nothing.
#
# Ports of the private servers: THAW_PG_PORT (default 55432), THAW_REDIS_PORT (56379).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_PORT="${THAW_PG_PORT:-55432}"
REDIS_PORT="${THAW_REDIS_PORT:-56379}"
PG_DIR="$DATA/postgres"
REDIS_DIR="$DATA/redis"

host_port_of() { # postgresql://u:p@host:port/db -> "host port"
  node -e 'const u=new URL(process.argv[1]); console.log(u.hostname, u.port || process.argv[2])' "$1" "$2"
}

ensure_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then
    read -r h p < <(host_port_of "$DATABASE_URL" 5432)
    port_open "$h" "$p" || die "DATABASE_URL is set but nothing answers on $h:$p. Start that server, or unset DATABASE_URL to let this script run a private one."
    say "PostgreSQL: using DATABASE_URL ($h:$p)"
    return
  fi
  local url="postgresql://thaw:thaw@127.0.0.1:$PG_PORT/thaw"
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$bindir" ]; then apt_ensure postgresql; bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1); fi
  # Postgres refuses to run as root: run the private server as the 'postgres' user.
  local as=()
  if is_root; then id postgres >/dev/null 2>&1 || apt_ensure postgresql; as=(runuser -u postgres -- env -C /); fi
  if is_root && [ ! -e "$PG_DIR" ] && ! runuser -u postgres -- test -x "$DATA"; then
    # The checkout is not reachable by the 'postgres' user (e.g. a clone under a 0700
    # temp dir): keep the cluster in a postgres-owned directory, linked from .data/.
    local outside="/var/lib/thaw-dev/$(printf %s "$ROOT" | sha1sum | cut -c1-12)"
    mkdir -p "$outside" && chown postgres "$outside"
    ln -sfn "$outside" "$PG_DIR"
    say "PostgreSQL: .data/postgres links to $outside (the checkout is not readable by user postgres)"
  fi
  [ -L "$PG_DIR" ] && PG_DIR="$(readlink -f "$PG_DIR")"
  if [ -f "$PG_DIR/data/postmaster.pid" ] && "${as[@]}" "$bindir/pg_ctl" -D "$PG_DIR/data" status >/dev/null 2>&1; then
    say "PostgreSQL: private server already running on 127.0.0.1:$PG_PORT"
  else
    if port_open 127.0.0.1 "$PG_PORT"; then
      # Another checkout's private server (same role and password) is as good as ours.
      if PGPASSWORD=thaw "$bindir/psql" -h 127.0.0.1 -p "$PG_PORT" -U thaw -d postgres -tAc "SELECT 1" >/dev/null 2>&1; then
        say "PostgreSQL: reusing the Thaw server already on 127.0.0.1:$PG_PORT"
        PGPASSWORD=thaw "$bindir/psql" -h 127.0.0.1 -p "$PG_PORT" -U thaw -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='thaw'" | grep -q 1 \
          || PGPASSWORD=thaw "$bindir/createdb" -h 127.0.0.1 -p "$PG_PORT" -U thaw thaw
        DATABASE_URL="$url"
        return
      fi
      die "port $PG_PORT is taken by another process. Set THAW_PG_PORT to a free port, or DATABASE_URL to a server you run."
    fi
    if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
      say "PostgreSQL: initialising $PG_DIR/data"
      mkdir -p "$PG_DIR"
      if is_root; then chown postgres "$PG_DIR/"; fi
      echo thaw > "$PG_DIR/pwfile"
      if is_root; then chown postgres "$PG_DIR/pwfile"; fi
      "${as[@]}" "$bindir/initdb" -D "$PG_DIR/data" -U thaw --pwfile="$PG_DIR/pwfile" --auth-host=scram-sha-256 --auth-local=trust -E UTF8 >/dev/null
      rm -f "$PG_DIR/pwfile"
    fi
    say "PostgreSQL: starting private server on 127.0.0.1:$PG_PORT"
    "${as[@]}" "$bindir/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
      -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $PG_DIR/data -c max_connections=300 -c fsync=on" start >/dev/null \
      || die "PostgreSQL did not start; see $PG_DIR/server.log"
  fi
  "${as[@]}" "$bindir/psql" -h "$PG_DIR/data" -p "$PG_PORT" -U thaw -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='thaw'" | grep -q 1 \
    || "${as[@]}" "$bindir/createdb" -h "$PG_DIR/data" -p "$PG_PORT" -U thaw thaw
  DATABASE_URL="$url"
}

ensure_redis() {
  if [ -n "${REDIS_URL:-}" ]; then
    read -r h p < <(host_port_of "$REDIS_URL" 6379)
    port_open "$h" "$p" || die "REDIS_URL is set but nothing answers on $h:$p. Start that server, or unset REDIS_URL to let this script run a private one."
    say "Redis: using REDIS_URL ($h:$p); the scheduler checks maxmemory-policy=noeviction at start"
    return
  fi
  command -v redis-server >/dev/null || apt_ensure redis-server
  mkdir -p "$REDIS_DIR"
  if [ -f "$REDIS_DIR/redis.pid" ] && kill -0 "$(cat "$REDIS_DIR/redis.pid")" 2>/dev/null; then
    say "Redis: private server already running on 127.0.0.1:$REDIS_PORT"
  else
    if port_open 127.0.0.1 "$REDIS_PORT"; then
      if [ "$(redis-cli -p "$REDIS_PORT" config get maxmemory-policy 2>/dev/null | tail -1)" = noeviction ]; then
        say "Redis: reusing the noeviction server already on 127.0.0.1:$REDIS_PORT"
        REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
        return
      fi
      die "port $REDIS_PORT is taken by another process. Set THAW_REDIS_PORT to a free port, or REDIS_URL to a server you run."
    fi
    say "Redis: starting private server on 127.0.0.1:$REDIS_PORT (noeviction, AOF)"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$REDIS_DIR" \
      --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" \
      --save "" --appendonly yes --maxmemory-policy noeviction >/dev/null
    for _ in $(seq 50); do port_open 127.0.0.1 "$REDIS_PORT" && break; sleep 0.1; done
    port_open 127.0.0.1 "$REDIS_PORT" || die "Redis did not start; see $REDIS_DIR/redis.log"
  fi
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
}

ensure_node_and_pnpm
[ -d "$ROOT/node_modules/.pnpm" ] || pnpm_install
ensure_postgres
ensure_redis
cat > "$DATA/services.env" <<ENV
DATABASE_URL='$DATABASE_URL'
REDIS_URL='$REDIS_URL'
ENV
export DATABASE_URL REDIS_URL

if [ "${THAW_SKIP_MIGRATE:-}" != 1 ]; then
  say "migrating"
  (cd "$ROOT/packages/db" && node scripts/migrate-deploy.mjs 2>&1 | grep -vE '^\s*$' | tail -n 3 >&2)
  say "seeding demo data"
  (cd "$ROOT/packages/db" && pnpm -s seed)
fi
say "services ready: DATABASE_URL and REDIS_URL are in .data/services.env"
