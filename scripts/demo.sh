#!/usr/bin/env bash
# make demo: servers up, migrate, ingest the smoke PDFs (+ DEMO_CORPUS), start a worker, ask, stop what we started.
set -euo pipefail
cd "$(dirname "$0")/.."
OWNER="$CITESTREAM_STATE_DIR/demo.owner"
WORKER_PID=""
cleanup() {
  if [ -n "$WORKER_PID" ]; then kill "$WORKER_PID" 2>/dev/null; wait "$WORKER_PID" 2>/dev/null || true; fi
  make -s down OWNER="$OWNER"
}
trap cleanup EXIT
make -s up OWNER="$OWNER"

DEMO_DIR="$CITESTREAM_STATE_DIR/demo-pdfs"
.venv/bin/python -m citestream.demo_pdfs "$DEMO_DIR"
.venv/bin/citestream ingest "$DEMO_DIR" ${DEMO_CORPUS:+"$DEMO_CORPUS"}

echo "starting a worker (log: $CITESTREAM_STATE_DIR/demo-worker.log)"
.venv/bin/citestream worker > "$CITESTREAM_STATE_DIR/demo-worker.log" 2>&1 &
WORKER_PID=$!

.venv/bin/citestream ask --timeout 120 \
  "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?" \
  "What complete remission rates has CD19-targeted CAR-T therapy achieved in relapsed ALL?" \
  "What does lecanemab target?" \
  "What is the boiling point of liquid nitrogen?"
