#!/usr/bin/env bash
# make test: lint (scripts/lint.sh), start what is missing, run pytest against the real servers, stop what this run started.
# Tests use their own database (citestream_test) and topic prefix (test.), never the demo's.
source "$(dirname "$0")/lib.sh"
bash scripts/lint.sh
servers_up test
# Includes the golden sets over the whole corpus through both paths (corpus_eval, ~6 min on a clean clone).
# PYTEST_ARGS is split as the shell would (quotes kept): PYTEST_ARGS='-m "not slow" -x' works.
eval "set -- ${PYTEST_ARGS:-}"
.venv/bin/python -m pytest -p no:cacheprovider --durations=25 "$@"
