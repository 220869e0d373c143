"""The claims golden set over the real corpus (tests/golden/claims_corpus.jsonl): ingest its PDFs, score.

Half the claims are stated by a page of a corpus PDF, half are contradicted or
absent; the gate is fail-closed first (no unsupported claim may pass), then accuracy.
"""

from pathlib import Path

import pytest

from citestream.ingest import from_pdf, ingest_document
from citestream.store import ChunkSearch, ChunkStore
from citestream.verification import OfflineJudge, grounding_for_query
from citestream.verification.eval import golden_pdfs, load_golden, score_claims

from .conftest import CORPUS

GOLDEN = Path(__file__).parent / "golden" / "claims_corpus.jsonl"
ROWS = load_golden(GOLDEN)


def test_golden_set_shape():
    labels = [r["label"] for r in ROWS]
    assert len(ROWS) >= 20 and len({r["id"] for r in ROWS}) == len(ROWS)
    assert labels.count("supported") * 2 >= len(ROWS) - 1 and labels.count("supported") * 2 <= len(ROWS) + 1
    for row in ROWS:
        if row["label"] != "absent":
            assert (CORPUS / row["pdf"]).exists() and row["page"] >= 1 and row["source_text"]


@pytest.mark.slow
def test_offline_verifier_on_the_corpus_claims(engine, embedder):
    store = ChunkStore(engine)
    for pdf in golden_pdfs(ROWS):
        ingest_document(from_pdf(CORPUS / pdf), store, embedder)
    search = ChunkSearch(engine)
    report = score_claims(ROWS, OfflineJudge(), lambda text: grounding_for_query(text, "MIXED", 8, search, embedder)[0])
    print({k: v for k, v in report.items() if k != "results"})
    assert report["false_passes"] == []          # fail closed: nothing unsupported passes
    assert report["accuracy"] >= 0.85
    for result in report["results"]:
        if result["verdict"] == "pass":
            assert result["evidence"]


@pytest.mark.slow
def test_verify_eval_command_gates_on_accuracy(engine, embedder, capsys):
    from citestream.cli import main

    assert main(["verify-eval", "--golden", str(GOLDEN), "--corpus", str(CORPUS), "--min-accuracy", "0.85"]) == 0
    assert '"false_passes": []' in capsys.readouterr().out
    assert main(["verify-eval", "--golden", str(GOLDEN), "--no-ingest", "--min-accuracy", "1.01"]) == 1
