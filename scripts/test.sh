#!/usr/bin/env bash
# make test: start what is missing, run pytest against the real servers, stop what this run started.
# Tests use their own database (citestream_test) and topic prefix (test.), never the demo's.
source "$(dirname "$0")/lib.sh"
servers_up test
# The golden sets over the whole corpus (corpus_eval, ~6 min) are left to `make eval`: see README, Tests.
.venv/bin/python -m pytest -m "not corpus_eval" -p no:cacheprovider --durations=15 ${PYTEST_ARGS:-}
