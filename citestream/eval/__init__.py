"""Golden-set evaluation: load a set, run it through the pipeline, score it, gate it, report it.

One module per job: ``sets`` (items and phrase matching), ``page_text`` (page text
straight from the PDFs), ``run`` (Kafka or in-process), ``score`` (per-item
outcomes and metrics), ``gates`` (qa-contract-v1 §3), ``run_report`` (JSON, table,
compare), ``plot`` (PNG per category), ``main`` (the ``citestream eval`` command).
"""
