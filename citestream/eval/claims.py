"""Scores the verifier on a golden set of claims over real PDFs (tests/golden/claims_corpus.jsonl).

Each claim is verified against the GroundingPack retrieved for its own text;
a ``supported`` claim is right when it passes, a ``contradicted`` or ``absent``
one when it does not. Accuracy is the share of claims judged right.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from ..models.retrieval import GroundingPack
from ..models.verdicts import Claim
from ..verification.judge import ClaimJudge
from ..verification.verify_claims import fail_closed

LABELS = ("supported", "contradicted", "absent")


def load_golden(path: str | Path) -> list[dict]:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if row.get("label") not in LABELS:
            raise ValueError(f"{row.get('id')}: label must be one of {LABELS}")
    return rows


def score_claims(rows: Iterable[dict], judge: ClaimJudge,
                 pack_for_claim: Callable[[str], GroundingPack | None]) -> dict:
    results = []
    for row in rows:
        pack = pack_for_claim(row["claim"])
        if pack is None or not pack.chunks:
            verdict, evidence, why = "unclear", [], "no grounding pack"
        else:
            v = fail_closed(judge.judge(Claim(id=row["id"], text=row["claim"]), pack), pack)
            verdict, evidence, why = v.verdict, [e.chunkId for e in v.evidence], v.rationale
        expected_pass = row["label"] == "supported"
        results.append({"id": row["id"], "label": row["label"], "verdict": verdict, "evidence": evidence,
                        "rationale": why, "correct": (verdict == "pass") == expected_pass})
    n = len(results)
    supported = [r for r in results if r["label"] == "supported"]
    others = [r for r in results if r["label"] != "supported"]
    return {
        "judge": judge.name,
        "claims": n,
        "accuracy": round(sum(r["correct"] for r in results) / n, 4) if n else 0.0,
        "supported_passed": sum(r["verdict"] == "pass" for r in supported),
        "supported": len(supported),
        "unsupported_rejected": sum(r["verdict"] != "pass" for r in others),
        "unsupported": len(others),
        "false_passes": [r["id"] for r in others if r["verdict"] == "pass"],
        "results": results,
    }


def golden_pdfs(rows: Iterable[dict]) -> list[str]:
    return sorted({r["pdf"] for r in rows if r.get("pdf")})


def run_eval(golden: str | Path, corpus: str | Path | None = None, scope: str = "MIXED", k: int = 8,
             judge: str = "relevance") -> dict:
    """What ``citestream verify-eval`` calls: ingest the golden set's PDFs (unchanged files are skipped) when
    ``corpus`` is given, then score every claim against the hybrid, reranked pack retrieved for it."""
    from ..ingest import from_pdf, ingest_document
    from ..qa.retrieve import grounding_pack
    from ..store import ChunkStore
    from ..deps import get_deps
    from ..verification import judge_from_settings

    rows = load_golden(golden)
    deps = get_deps()
    if corpus is not None:
        store = ChunkStore(deps.engine)
        for pdf in golden_pdfs(rows):
            ingest_document(from_pdf(Path(corpus) / pdf), store, deps.embedder)
    chosen = judge_from_settings(deps.settings.model_copy(update={"verify_judge": judge}), lambda: deps.llm,
                                 lambda: deps.claim_relevance)
    return score_claims(rows, chosen, lambda text: grounding_pack(text, scope, k, deps.search, deps.embedder,
                                                                   deps.policy, deps.claim_relevance).grounding)
