#!/usr/bin/env bash
# make bench: every benchmark module under bench/ (or BENCH=name), against the real servers; prints its figures.
# Benchmarks use their own database and topic prefix; ingest ../shared/corpus once and reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."
OWNER="$CITESTREAM_STATE_DIR/bench.owner"
export CITESTREAM_DATABASE_URL="${CITESTREAM_BENCH_DATABASE_URL:-postgresql://postgres@127.0.0.1:${CITESTREAM_PG_PORT:-55432}/citestream_bench}"
export CITESTREAM_TOPIC_PREFIX="${CITESTREAM_TOPIC_PREFIX:-bench.}"
export CITESTREAM_APP_ID="${CITESTREAM_APP_ID:-citestream-bench}"
trap 'make -s down OWNER="$OWNER"' EXIT
make -s up OWNER="$OWNER"
for module in ${BENCH:-$(ls bench/*.py | xargs -n1 basename | sed 's/\.py$//' | grep -v '^_' | sort)}; do
  echo "=== bench/$module.py ==="
  .venv/bin/python -m "bench.$module"
done
