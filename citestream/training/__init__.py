"""How the relevance model is made, beside the product (the CLI's ``model`` commands, ``make model``); nothing at
run time imports it: training pairs from the corpus and from FDA's own Q&A, then fine-tuning.

``corpus`` reads the PDFs into chunks and sentence units (the ingest parser, no database), ``questions`` has a
local LLM write questions about sentences (slow: run ahead, cached), ``pairs`` turns every source into labelled
(question, text) pairs, ``train`` fine-tunes the cross-encoder and writes the shipped artifact.
"""
