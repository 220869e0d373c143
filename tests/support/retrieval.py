"""Documents of known content for the retrieval tests, ingested once per session into the test database."""

from __future__ import annotations

# doc_id → (authority, text). The doc_id doubles as the PDF name the fallback gate reads.
DOCUMENTS: dict[str, tuple[str, str]] = {
    "process-validation-lifecycle": ("FDA", (
        "Process validation is defined as the collection and evaluation of data, from the process design stage "
        "through commercial production, which establishes scientific evidence that a process is capable of "
        "consistently delivering quality product. Process validation involves a series of activities taking place "
        "over the lifecycle of the product and process. Stage 1 is process design, Stage 2 is process "
        "qualification and Stage 3 is continued process verification.")),
    "continuous-manufacturing-q13": ("ICH", (
        "Continuous manufacturing integrates unit operations so that input materials are continuously fed into "
        "and transformed within the process while output materials are continuously removed. ICH Q13 describes "
        "scientific and regulatory considerations for the development, implementation, operation and lifecycle "
        "management of continuous manufacturing of drug substances and drug products.")),
    "lot-release-codes": ("FDA", (
        "Each batch record shall carry the lot release code XQ7741 issued by the quality unit. The quality unit "
        "reviews the executed batch record before the lot is released for distribution.")),
    # An exact copy (for MMR) and a related but different text about the same quality unit.
    "lot-release-codes-copy": ("FDA", (
        "Each batch record shall carry the lot release code XQ7741 issued by the quality unit. The quality unit "
        "reviews the executed batch record before the lot is released for distribution.")),
    "quality-unit-authority": ("FDA", (
        "The quality unit has the responsibility and authority to approve or reject all components, containers, "
        "in-process materials, labeling and drug products, and to review production records so that no error "
        "has occurred before a batch is released.")),
    "electronic-records-retention": ("FDA", (
        "Audit trail documentation shall be retained for a period at least as long as that required for the "
        "subject electronic records and shall be available for agency review and copying. Electronic signatures "
        "shall be linked to their respective electronic records.")),
    # Defines an acronym (query expansion by the corpus' own acronyms).
    "annual-product-review": ("FDA", (
        "An annual product review (APR) evaluates the quality standards of each marketed drug product at least "
        "once a year. The APR summarises complaints, recalls, returned goods and stability results so that the "
        "need for changes in specifications or manufacturing procedures can be determined.")),
}


def ingest_documents(engine, embedder) -> None:
    from citestream.ingest import from_text, ingest_document
    from citestream.store import ChunkStore

    store = ChunkStore(engine)
    for doc_id, (authority, text) in DOCUMENTS.items():
        ingest_document(from_text(doc_id, text, title=doc_id, authority=authority), store, embedder)
