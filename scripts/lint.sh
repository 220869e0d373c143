#!/usr/bin/env bash
# make lint (and make test's first step): ruff, dead code, import contracts, types. Why each tool: docs/layering.md.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "ruff: style and bug patterns (rules in pyproject.toml [tool.ruff])"
.venv/bin/ruff check --quiet citestream tests bench scripts
echo "vulture: dead code in citestream/ (reasons for the names it may not see used: vulture_whitelist.py)"
.venv/bin/vulture citestream vulture_whitelist.py
echo "lint-imports: the layering contracts (pyproject.toml [tool.importlinter])"
out=$(.venv/bin/lint-imports --no-cache 2>&1) || { echo "$out"; exit 1; }
grep "^Contracts:" <<< "$out"
echo "mypy: types in citestream/ (pyproject.toml [tool.mypy])"
.venv/bin/mypy citestream
echo "mypy --strict: the shared rules and the records (citestream/core, citestream/models), which import nothing else"
.venv/bin/mypy --strict citestream/core citestream/models
echo "lint: clean"
