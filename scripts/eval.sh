#!/usr/bin/env bash
# make eval: servers up, ingest ../shared/corpus into the eval database (unchanged PDFs are skipped), start a worker,
# run both golden sets through Kafka, apply the qa-contract-v1 gates, stop what this run started.
# Exit status: that of `citestream eval` (1 on a gate breach), or non-zero if a step before it failed.
source "$(dirname "$0")/lib.sh"
own_data eval "${CITESTREAM_EVAL_DATABASE_URL:-}"
CORPUS="${EVAL_CORPUS:-../shared/corpus}"
OUT="${EVAL_OUT:-$CITESTREAM_STATE_DIR/eval}"
LOG="$CITESTREAM_STATE_DIR/eval-worker.log"
servers_up eval

.venv/bin/citestream ingest "$CORPUS"

start_worker "$LOG"
wait_worker_ready "$LOG"

.venv/bin/citestream eval --through kafka --out "$OUT" ${EVAL_ARGS:-}
