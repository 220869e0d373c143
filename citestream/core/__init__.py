"""The small core: rules every stage shares, written once. It imports nothing else of citestream.

* ``hashing`` — SHA-256 of text, as the records and the ledger store it;
* ``texts`` — the refusal the user reads and the lock the prompt tells the model to write;
* ``tokens`` — the token-counter type assembly is handed;
* ``replies`` — a model reply's JSON text without its optional ```json fence;
* ``prompt_sections`` — PROMPT_V1's section headers and the text between them.
"""
