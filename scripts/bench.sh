#!/usr/bin/env bash
# make bench: every benchmark module under bench/ (or BENCH=name), against the real servers; prints its figures.
# Benchmarks use their own database and topic prefix; ingest ../shared/corpus once and reuse it.
source "$(dirname "$0")/lib.sh"
own_data bench "${CITESTREAM_BENCH_DATABASE_URL:-}"
# The bench topics keep an hour of records: the embedded broker's CPU grows with what it keeps (a 650 MB store
# took p99 from 1.45 to 2.35 s in the soak), so a figure must not depend on what earlier runs left there.
export CITESTREAM_TOPIC_RETENTION_HOURS="${CITESTREAM_TOPIC_RETENTION_HOURS:-1}"
servers_up bench
# Every module, scale first: it builds the 10x and 100x databases that hnsw's curve reads.
modules="scale $(ls bench/*.py | xargs -n1 basename | sed 's/\.py$//' | grep -v -e '^_' -e '^scale$' | sort | xargs)"
for module in ${BENCH:-$modules}; do
  echo "=== bench/$module.py ==="
  .venv/bin/python -m "bench.$module"
done
