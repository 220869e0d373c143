#!/usr/bin/env bash
# make test: start what is missing, run pytest against the real servers, stop what this run started.
set -euo pipefail
cd "$(dirname "$0")/.."
OWNER="$CITESTREAM_STATE_DIR/test.owner"
export CITESTREAM_DATABASE_URL="${CITESTREAM_TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:${CITESTREAM_PG_PORT:-55432}/citestream_test}"
export CITESTREAM_TOPIC_PREFIX="${CITESTREAM_TOPIC_PREFIX:-test.}"
export CITESTREAM_APP_ID="${CITESTREAM_APP_ID:-citestream-test}"
trap 'make -s down OWNER="$OWNER"' EXIT
make -s up OWNER="$OWNER"
.venv/bin/python -m pytest ${PYTEST_ARGS:-}
