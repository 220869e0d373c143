#!/usr/bin/env bash
# make test: start what is missing, run pytest against the real servers, stop what this run started.
# Tests use their own database (citestream_test) and topic prefix (test.), never the demo's.
source "$(dirname "$0")/lib.sh"
servers_up test
# Everything, including both golden sets over the whole corpus through both paths (corpus_eval, ~8 min here:
# corpus ingest plus 2 x 123 questions); PYTEST_ARGS='-m "not corpus_eval"' leaves them to `make eval`.
.venv/bin/python -m pytest -p no:cacheprovider --durations=15 ${PYTEST_ARGS:-}
