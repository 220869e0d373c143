# Sourced by the make scripts (test, demo, eval, bench): what each run does the same way.
# Servers come up through an owner file of the run's own, so the EXIT trap stops only what this run started
# (and the worker it started, if any).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WORKER_PID=""
WEB_PID=""

cleanup() {
  if [ -n "$WEB_PID" ]; then kill "$WEB_PID" 2>/dev/null || true; wait "$WEB_PID" 2>/dev/null || true; fi
  if [ -n "$WORKER_PID" ]; then kill "$WORKER_PID" 2>/dev/null || true; wait "$WORKER_PID" 2>/dev/null || true; fi
  make -s down OWNER="$OWNER"
}

# servers_up NAME: start what is missing, recorded in $CITESTREAM_STATE_DIR/NAME.owner; stop it on exit.
servers_up() {
  OWNER="$CITESTREAM_STATE_DIR/$1.owner"
  trap cleanup EXIT
  make -s up OWNER="$OWNER"
}

# own_data NAME [URL]: the run's own database (URL, else citestream_NAME), topic prefix and consumer group.
own_data() {
  export CITESTREAM_DATABASE_URL="${2:-postgresql://postgres@127.0.0.1:${CITESTREAM_PG_PORT:-55432}/citestream_$1}"
  export CITESTREAM_TOPIC_PREFIX="${CITESTREAM_TOPIC_PREFIX:-$1.}"
  export CITESTREAM_APP_ID="${CITESTREAM_APP_ID:-citestream-$1}"
}

# start_worker LOG: a worker in the background, stopped on exit.
start_worker() {
  echo "starting a worker (log: $1)"
  .venv/bin/citestream worker > "$1" 2>&1 &
  WORKER_PID=$!
}

# wait_worker_ready LOG: until the worker logs "Worker ready"; exit 1 with its log's tail if it dies or takes 300 s.
wait_worker_ready() {
  for _ in $(seq 1 600); do
    grep -q "Worker ready" "$1" 2>/dev/null && return 0
    kill -0 "$WORKER_PID" 2>/dev/null || { echo "worker exited:"; tail -50 "$1"; exit 1; }
    sleep 0.5
  done
  grep -q "Worker ready" "$1" || { echo "worker not ready after 300 s"; tail -50 "$1"; exit 1; }
}

# start_web LOG: `citestream web` in the background (stopped on exit); waits until it answers /healthz.
start_web() {
  echo "starting the web page (log: $1)"
  .venv/bin/citestream web > "$1" 2>&1 &
  WEB_PID=$!
  local url="http://127.0.0.1:${CITESTREAM_UI_PORT:-8088}/healthz"
  for _ in $(seq 1 120); do
    .venv/bin/python -c "import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)" "$url" \
      2>/dev/null && return 0
    kill -0 "$WEB_PID" 2>/dev/null || { echo "citestream web exited:"; tail -20 "$1"; exit 1; }
    sleep 0.5
  done
  echo "citestream web not answering after 60 s"; tail -20 "$1"; exit 1
}
