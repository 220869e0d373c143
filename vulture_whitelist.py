"""Names vulture reports as unused that are used, by a framework or outside citestream/.

`make lint` runs `vulture citestream vulture_whitelist.py` (settings in pyproject.toml [tool.vulture], which also
skips functions under @app.agent, pydantic's validators and SQLAlchemy's @event.listens_for).
Vulture reads this file, it is never imported. A name belongs here only with the reason it is not dead;
a function nothing uses is deleted instead.
"""
# ruff: noqa
_ = object()

# pydantic fields and settings: read by serialisation (model_dump / JSON schema), not by attribute access
model_config
dropped_sentences, explanation                                             # models/answer.py
retrieved_k, selected_k, dedup_dropped_count, budget_dropped_count        # models/assembly.py
per_knowledge_cap_dropped_count, empty_dropped_count, below_floor_dropped_count, max_chunks_dropped_count
unsafe_dropped_count, evidence_token_count, truncation_applied, truncated_chunk_ids, drop_reason_codes
retrieval_top_k, selection_policy, evidence_block_sha256, assembly_metrics, allowed_anchors
_.evidence_for                                                             # models/assembly.py, used by tests
elapsed_ms, schema_version                                                 # models/common.py
llm_rows_rejected                                                          # models/filtering.py
chunkCount, authoritySource, issuerEvidence, ingestedCount, chunkIds, docIds, outputs  # models/ingest.py, models/verdicts.py
original_length, original_sha256, original_truncated, answerable_count, fallback_count  # models/ops.py
asked_at                                                                   # models/question.py
rerank_k, expansions, fused_candidates, scope_inferred, retrieval_trace    # models/retrieval.py
claimId, claim_verdicts, overallPass                                       # models/verdicts.py
matched_phrase                                                             # eval/score.py
absent_terms, source_id                                                    # eval/sets.py (golden-set rows)
cls  # first argument of pydantic's classmethod validators

# dataclass fields: part of the record even where no caller reads them by name
duplicate_rows          # qa/filter/llm_filter.py ValidatedFacts (tests read it)
strict_no_evidence, prompt_refusal_lock  # core/policy.py: policy fields, in the policy snapshot
mmr_applied             # qa/retrieve/acceptance.py Accepted
description             # topics TopicSpec
timestamp_ms            # web/views.py: a JSON field the page's script reads

# arguments that are part of an lru_cache key (a changed file is read again)
mtime                   # ingest/issuer.py _manifest

# framework hooks
_.on_partitions_revoked, _.on_partitions_assigned, revoked  # web/bridge.py: aiokafka ConsumerRebalanceListener
_.__qualname__          # streams/faust_app.py: faust names the agent by it
_._add_gap              # streams/faust_fixes.py: a patch on faust's Consumer

# imported under TYPE_CHECKING and named only in a cast("...") string, which vulture does not read
CreateChatCompletionResponse  # llm/local.py, training/questions.py

# version labels naming what the module implements (see its docstring)
SANITIZATION_MODE       # core/sanitize.py
FILTER_PROMPT_VERSION   # qa/filter/llm_filter.py

# public API used by tests, bench/ and scripts/ (outside what vulture reads)
read_topic              # ops/client.py
_.owner_dsn             # config.py
_.embed_one             # embedding.py
page_texts, corpus_pdfs  # eval/page_text.py, ingest/pdf.py
word_key, UNANSWERABLE_CATEGORIES  # eval/sets.py
docker_servers          # infra/docker.py (tests/conftest.py with CITESTREAM_INFRA=docker)
_.drop_database         # infra/postgres.py
WorkerProcess, _.wait_ready  # infra/worker.py
process_cpu, machine_cpu, peak_memory_mb, named_threads_cpu  # infra/procfs.py (bench/worker_cpu.py, bench/relevance.py, tests)
DEFAULT_POLICY          # core/policy.py
_.count_chunks          # store/chunks.py
_.dense_search          # store/search.py


# store/tables.py: declared for the schema (metadata checked against the migrations); kept by triggers, read in SQL
chunk_stats
lexeme_stats
_.clear_cache           # relevance/scorer.py: bench/scale.py clears it between arms
_.documents_read        # store/memory_index.py: read by tests/store/test_lexical_stats.py
_.megabytes              # store/memory_index.py: printed by bench/scale.py
topic_configs           # topics/__init__.py: read by tests/streams/test_topics.py
_.max_seq_length  # training/embedder.py, sentence-transformers reads it: the training length of the relevance embedder
threshold_ceiling       # training/train.py: read by scripts/relevance_ranking.py
KINDS                   # core/slots.py: tests/core/test_slots.py checks the record model's AskedSlot against it
_.intra_op_num_threads, _.inter_op_num_threads  # relevance/onnx_runtime.py: read by onnxruntime's SessionOptions
get_next                                                                   # relevance/onnx_runtime.py: called by onnxruntime's calibrator
_.answer_texts_found     # training/written.py: tests/training/test_written.py checks how many written answer texts realign
prepare                  # verification/synonyms.py: the Makefile's install and the Dockerfile call it
