#!/usr/bin/env bash
# make eval: servers up, ingest ../shared/corpus into the eval database (unchanged PDFs are skipped), start a worker,
# run both golden sets through Kafka, apply the qa-contract-v1 gates, stop what this run started.
# Exit status: that of `citestream eval` (1 on a gate breach), or non-zero if a step before it failed.
set -euo pipefail
cd "$(dirname "$0")/.."
OWNER="$CITESTREAM_STATE_DIR/eval.owner"
export CITESTREAM_DATABASE_URL="${CITESTREAM_EVAL_DATABASE_URL:-postgresql://postgres@127.0.0.1:${CITESTREAM_PG_PORT:-55432}/citestream_eval}"
export CITESTREAM_TOPIC_PREFIX="${CITESTREAM_TOPIC_PREFIX:-eval.}"
export CITESTREAM_APP_ID="${CITESTREAM_APP_ID:-citestream-eval}"
CORPUS="${EVAL_CORPUS:-../shared/corpus}"
OUT="${EVAL_OUT:-$CITESTREAM_STATE_DIR/eval}"
LOG="$CITESTREAM_STATE_DIR/eval-worker.log"
WORKER_PID=""
cleanup() {
  if [ -n "$WORKER_PID" ]; then kill "$WORKER_PID" 2>/dev/null; wait "$WORKER_PID" 2>/dev/null || true; fi
  make -s down OWNER="$OWNER"
}
trap cleanup EXIT
make -s up OWNER="$OWNER"

.venv/bin/citestream ingest "$CORPUS"

echo "starting a worker (log: $LOG)"
.venv/bin/citestream worker > "$LOG" 2>&1 &
WORKER_PID=$!
for _ in $(seq 1 600); do
  grep -q "Worker ready" "$LOG" 2>/dev/null && break
  kill -0 "$WORKER_PID" 2>/dev/null || { echo "worker exited:"; tail -50 "$LOG"; exit 1; }
  sleep 0.5
done
grep -q "Worker ready" "$LOG" || { echo "worker not ready after 300 s"; tail -50 "$LOG"; exit 1; }

.venv/bin/citestream eval --through kafka --out "$OUT" ${EVAL_ARGS:-}
