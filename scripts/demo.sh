#!/usr/bin/env bash
# make demo: servers up, migrate, ingest the smoke PDFs (+ DEMO_CORPUS), start a worker and the web page, ask,
# stop what we started — or, with DEMO_KEEP=1, keep the worker and the page running until Ctrl-C.
source "$(dirname "$0")/lib.sh"
servers_up demo

DEMO_DIR="$CITESTREAM_STATE_DIR/demo-pdfs"
.venv/bin/python -m citestream.ops.demo_pdfs "$DEMO_DIR"
.venv/bin/citestream ingest "$DEMO_DIR" ${DEMO_CORPUS:+"$DEMO_CORPUS"}

start_worker "$CITESTREAM_STATE_DIR/demo-worker.log"
wait_worker_ready "$CITESTREAM_STATE_DIR/demo-worker.log"  # models warm and the judge's graph built before the first question
start_web "$CITESTREAM_STATE_DIR/demo-web.log"
WEB_URL="http://127.0.0.1:${CITESTREAM_UI_PORT:-8088}/"
echo "web page: $WEB_URL"

# One question at a time, as a person asks: each answer's line shows the seconds from asking to the answer.
for question in \
  "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?" \
  "What complete remission rates has CD19-targeted CAR-T therapy achieved in relapsed ALL?" \
  "What does lecanemab target?" \
  "What is the boiling point of liquid nitrogen?"; do
  .venv/bin/citestream ask --timeout 120 "$question"
done

if [ "${DEMO_KEEP:-0}" = "1" ]; then
  echo "web page: $WEB_URL — worker and page keep running; Ctrl-C stops them and the servers this demo started"
  wait "$WORKER_PID"
else
  echo "web page was at $WEB_URL (stopped now; run DEMO_KEEP=1 make demo to keep it open)"
fi
