#!/usr/bin/env bash
# Sets up and runs the product: the dashboard on http://localhost:3000, the scheduler, and a
# demo fleet of simulated GPU hosts. Ctrl-C stops every process cleanly.
#
#   THAW_WEB_PORT      dashboard port (3000)
#   THAW_WEB_HOST      address the dashboard listens on (127.0.0.1: the demo's password is
#                      published, so the demo is not reachable from other machines unless asked)
#   THAW_SIM_HOSTS     demo fleet, "<type>:<count>[:<data volume MiB/s>],…"; the default
#                      "g5.xlarge:2:1000,g6e.xlarge:1:1000,g6e.xlarge:1" gives every host the gp3
#                      volume the fleet provider provisions (1,000 MiB/s) except sim-g6e-xlarge-2,
#                      left on the default 125 MiB/s disk so the bottleneck hints have one to name
#   THAW_SIM_TIME_FACTOR  simulated phases run this many times faster (10); reported durations stay simulated
#   THAW_WEB_MODE      "production" (next build + start, the default) or "dev" (next dev)
#   THAW_FLEET_CONFIG  the scheduler's fleet file; default .data/fleet.json, written here: the
#                      `sim` provider grows the demo fleet from the agent's sim cloud when
#                      replicas wait for a GPU and retires hosts it launched after 2 idle minutes
#   THAW_AGENT_LISTEN  the sim agent's API and sim cloud (127.0.0.1:7070)
#   THAW_SNAPSHOT_REGISTRY  the operator's snapshot store (localhost:5000/thaw-snapshots: the sim
#                      hosts honour any; set it empty and no snapshots are taken)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WEB_PORT="${THAW_WEB_PORT:-3000}"
WEB_HOST="${THAW_WEB_HOST:-127.0.0.1}"
SIM_HOSTS="${THAW_SIM_HOSTS:-g5.xlarge:2:1000,g6e.xlarge:1:1000,g6e.xlarge:1}"
LOGS="$DATA/logs"
mkdir -p "$LOGS" "$DATA/agent"

ensure_node_and_pnpm
pnpm_install
bash "$ROOT/infra/dev/services.sh"
load_service_env

port_open 127.0.0.1 "$WEB_PORT" && die "port $WEB_PORT is taken by another process. Stop it, or run with THAW_WEB_PORT=<free port>."

# The session-signing secret is generated once per checkout and kept out of the repo.
if [ ! -s "$DATA/auth-secret" ]; then (umask 077 && node -e 'console.log(require("crypto").randomBytes(32).toString("base64url"))' > "$DATA/auth-secret"); fi
export BETTER_AUTH_SECRET="$(cat "$DATA/auth-secret")"
# The scheduler signs its calls to agents with this Ed25519 key (generated once); the web tier
# gets only the public half, which it hands to agents when they join. Node credentials are
# random per node: no secret derives them (the old node-credential secret is removed).
rm -f "$DATA/node-credential-secret"
if [ ! -s "$DATA/agent-call-key" ]; then (umask 077 && node -e 'console.log(require("crypto").generateKeyPairSync("ed25519").privateKey.export({format:"der",type:"pkcs8"}).toString("base64"))' > "$DATA/agent-call-key"); fi
AGENT_CALL_KEY="$(cat "$DATA/agent-call-key")"
export THAW_AGENT_CALL_PUBLIC_KEY="$(node -e 'const c=require("crypto");console.log(c.createPublicKey(c.createPrivateKey({key:Buffer.from(process.argv[1],"base64"),format:"der",type:"pkcs8"})).export({format:"der",type:"spki"}).toString("base64"))' "$AGENT_CALL_KEY")"
export BETTER_AUTH_URL="http://localhost:$WEB_PORT"
# The sim cloud's shared secret (the scheduler's sim fleet provider and the agent).
if [ ! -s "$DATA/sim-cloud-token" ]; then (umask 077 && node -e 'console.log(require("crypto").randomBytes(24).toString("base64url"))' > "$DATA/sim-cloud-token"); fi
export THAW_SIM_CLOUD_TOKEN="$(cat "$DATA/sim-cloud-token")"
# Seals the demo org's registry credentials (web and scheduler share it).
if [ ! -s "$DATA/credentials-key" ]; then (umask 077 && node -e 'console.log(require("crypto").randomBytes(32).toString("base64"))' > "$DATA/credentials-key"); fi
export THAW_CREDENTIALS_KEY="$(cat "$DATA/credentials-key")"
AGENT_LISTEN="${THAW_AGENT_LISTEN:-127.0.0.1:7070}"
port_open "${AGENT_LISTEN%:*}" "${AGENT_LISTEN##*:}" && die "port ${AGENT_LISTEN##*:} (the sim agent) is taken by another process. Stop it, or run with THAW_AGENT_LISTEN=127.0.0.1:<free port>."
# The sim agent serves https with a certificate it keeps in its state directory (made now if
# there is none): the scheduler calls its sim cloud pinned to it, as it calls every agent.
AGENT_CERT_SHA256="$(cd "$ROOT/apps/agent" && THAW_AGENT_STATE_DIR="$DATA/agent" node --import tsx src/cli/agent-certificate.ts)" || die "could not make the sim agent's TLS certificate"
if [ -z "${THAW_FLEET_CONFIG:-}" ]; then
  cat > "$DATA/fleet.json" <<FLEET
{
  "provider": "sim",
  "offerings": [
    { "instanceType": "g5.xlarge", "zone": "sim-a", "priceUsdPerHour": 1.006 },
    { "instanceType": "g6e.xlarge", "zone": "sim-a", "priceUsdPerHour": 1.861 }
  ],
  "idleCooldownSeconds": 120,
  "bootSeconds": 90,
  "sim": {
    "cloudUrl": "https://$AGENT_LISTEN",
    "cloudCertSha256": "$AGENT_CERT_SHA256",
    "dataVolume": { "throughputMiBps": 1000, "iops": 16000 }
  }
}
FLEET
  export THAW_FLEET_CONFIG="$DATA/fleet.json"
fi

if [ "${THAW_WEB_MODE:-production}" = production ]; then
  say "building the dashboard (next build)"
  (cd "$ROOT/apps/web" && node_modules/.bin/next build >"$LOGS/web-build.log" 2>&1) || { tail -40 "$LOGS/web-build.log" >&2; die "next build failed (log: .data/logs/web-build.log)"; }
  WEB_CMD=(node_modules/.bin/next start --port "$WEB_PORT" --hostname "$WEB_HOST")
else
  WEB_CMD=(node_modules/.bin/next dev --port "$WEB_PORT" --hostname "$WEB_HOST")
fi

PIDS=()
DEMO_PIDS=() # the trace replay: optional, so its exit does not stop the product
stop_all() {
  local code=${1:-0}
  trap - INT TERM EXIT
  say "stopping…"
  for pid in "${PIDS[@]}" "${DEMO_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}" "${DEMO_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  say "stopped. (PostgreSQL and Redis keep running; 'bash infra/dev/stop-services.sh' stops them.)"
  exit "$code"
}
trap 'stop_all 0' INT TERM
trap 'stop_all $?' EXIT

# The demo keeps up to 2 idle GPUs warm across its endpoints (the product's default is 0:
# idle GPUs cost money, so an operator chooses the budget).
export THAW_WARM_POOL_GPU_BUDGET="${THAW_WARM_POOL_GPU_BUDGET:-2}"
# Snapshots go to a store the operator owns (THAW_SNAPSHOT_REGISTRY); the sim hosts "push"
# their checkpoints there and restore them by digest, so the demo exercises the restore path.
export THAW_SNAPSHOT_REGISTRY="${THAW_SNAPSHOT_REGISTRY-localhost:5000/thaw-snapshots}"

# Each process writes its own log; `exec` makes the PID we hold the process itself.
# Only the scheduler gets the agent-call key.
(cd "$ROOT/apps/scheduler" && THAW_AGENT_CALL_KEY="$AGENT_CALL_KEY" exec node --import tsx src/main.ts) >"$LOGS/scheduler.log" 2>&1 &
PIDS+=($!)
(cd "$ROOT/apps/web" && exec "${WEB_CMD[@]}") >"$LOGS/web.log" 2>&1 &
PIDS+=($!)

say "waiting for the dashboard on port $WEB_PORT"
for _ in $(seq 120); do port_open 127.0.0.1 "$WEB_PORT" && break; sleep 0.5; done
port_open 127.0.0.1 "$WEB_PORT" || { tail -30 "$LOGS/web.log" >&2; die "the dashboard did not start (log: .data/logs/web.log)"; }

# Fresh one-time join tokens for demo hosts that have no credential yet (unused ones expire).
hosts=$(node -e 'console.log(process.argv[1].split(",").reduce((n,p)=>n+Number(p.split(":")[1]),0))' "$SIM_HOSTS")
(cd "$ROOT/apps/scheduler" && node_modules/.bin/tsx src/cli/issue-join-tokens.ts --org demo --count "$hosts" --ttl 3600) > "$DATA/agent/join-tokens"
chmod 600 "$DATA/agent/join-tokens"
(cd "$ROOT/apps/agent" && THAW_CONTROL_PLANE_URL="http://127.0.0.1:$WEB_PORT" THAW_SIM_HOSTS="$SIM_HOSTS" THAW_SIM_TIME_FACTOR="${THAW_SIM_TIME_FACTOR:-10}" \
  THAW_JOIN_TOKENS_FILE="$DATA/agent/join-tokens" THAW_AGENT_STATE_DIR="$DATA/agent" THAW_AGENT_LISTEN="$AGENT_LISTEN" exec node --import tsx src/main.ts) >"$LOGS/agent.log" 2>&1 &
PIDS+=($!)

# The demo's load: a public request trace replayed as load signals against one seeded
# endpoint (THAW_DEMO_TRACE=off to skip; any azure-llm trace file to replay another).
DEMO_TRACE="${THAW_DEMO_TRACE:-$ROOT/../shared/data/traces/AzureLLMInferenceTrace_code.csv}"
DEMO_ENDPOINT="${THAW_DEMO_ENDPOINT:-llama-3-2-1b-gguf}"
if [ "$DEMO_TRACE" != off ] && [ -f "$DEMO_TRACE" ]; then
  (cd "$ROOT/apps/scheduler" && exec node_modules/.bin/tsx src/cli/replay-trace-signals.ts --trace "$DEMO_TRACE" \
    --endpoint "$DEMO_ENDPOINT" --url "http://127.0.0.1:$WEB_PORT" --speed "${THAW_DEMO_TRACE_SPEED:-4}") >"$LOGS/trace-replay.log" 2>&1 &
  DEMO_PIDS+=($!)
  DEMO_LINE="Demo load  $(basename "$DEMO_TRACE") replayed as load signals on $DEMO_ENDPOINT (${THAW_DEMO_TRACE_SPEED:-4}× speed; THAW_DEMO_TRACE=off to skip)"
else
  DEMO_LINE="Demo load  none (no trace at $DEMO_TRACE): scale endpoints from the dashboard or REST"
fi

cat >&2 <<BANNER

  Thaw is running.
    Dashboard   http://localhost:$WEB_PORT
    Sign in     demo@thaw.dev  /  thaw-demo-password
    Demo fleet  $SIM_HOSTS (simulated GPU hosts, joining now; the third
                figure is a host's gp3 data volume in MiB/s, none: the default 125 MiB/s disk);
                more are launched from the sim cloud, with 1,000 MiB/s volumes, when replicas
                wait for a GPU, and retired after 2 idle minutes
    $DEMO_LINE
    Logs        .data/logs/{web,scheduler,agent,trace-replay}.log

  Press Ctrl-C to stop.

BANNER

# Stop everything as soon as any one process dies, and say which.
while :; do
  for i in "${!PIDS[@]}"; do
    if ! kill -0 "${PIDS[$i]}" 2>/dev/null; then
      name=(scheduler web agent); say "${name[$i]} exited; see .data/logs/${name[$i]}.log"; stop_all 1
    fi
  done
  sleep 1
done
