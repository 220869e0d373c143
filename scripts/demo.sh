#!/usr/bin/env bash
# make demo: servers up, migrate, ingest the smoke PDFs (+ DEMO_CORPUS), start a worker, ask, stop what we started.
source "$(dirname "$0")/lib.sh"
servers_up demo

DEMO_DIR="$CITESTREAM_STATE_DIR/demo-pdfs"
.venv/bin/python -m citestream.demo_pdfs "$DEMO_DIR"
.venv/bin/citestream ingest "$DEMO_DIR" ${DEMO_CORPUS:+"$DEMO_CORPUS"}

start_worker "$CITESTREAM_STATE_DIR/demo-worker.log"

.venv/bin/citestream ask --timeout 120 \
  "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?" \
  "What complete remission rates has CD19-targeted CAR-T therapy achieved in relapsed ALL?" \
  "What does lecanemab target?" \
  "What is the boiling point of liquid nitrogen?"
