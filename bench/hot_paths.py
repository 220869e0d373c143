"""What issue 48's changes cost on the hot paths, before and after, arms alternated round by round.

- **Seals.** A question's records are sealed five times and checked four times in the worker, and its answer once
  more by the page: HMAC-SHA256 before, Ed25519 now (sign, and verify with the public key), over records of the
  sizes the flow writes (19, 19, 12, 12 and 4 kB of corpus text; the canonical JSON is the same in both arms).
- **Patterns.** The patterns made linear, on corpus text as the flow meets it: every sentence of 19 corpus PDFs
  through the bullet split, the space-before-punctuation rule, the e-mail check, the identifier and CHALLENGE
  patterns; and ingest's layout pass (``extract_blocks``) with the old and the new hyphenation patterns.
- **The page.** What a request's budget check costs (``Budgets.spend``, twice for a write).

No servers: the PDFs are parsed once in the sandbox's child. Times are the CPU time of the measuring thread (others'
load on a shared machine does not count). Printed: each arm's median over the rounds, and the ratio after / before.

    BENCH_HOT_ROUNDS=7 python -m bench.hot_paths
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import statistics
import time
from collections.abc import Callable

from citestream.core import text_units
from citestream.compliance import rule_evaluator
from citestream.core.text_units import normalize, split_sentences
from citestream.ingest import layout
from citestream.ingest.pdf import read_pages
from citestream.qa.filter import rule_filter
from citestream.sealing import RecordSealer, canonical
from citestream.verification import terms
from citestream.web.budgets import Budgets
from citestream.web.settings import WebSettings

from ._support import CORPUS

ROUNDS = int(os.environ.get("BENCH_HOT_ROUNDS", "7"))
KEY = bytes(range(32))

# Each pattern as the flow calls it: (before issue 48, now)
_OLD_CHALLENGE = re.compile(
    r"\b(should (?:we|i|the|it|they|this)|instead|rather than|reconsider|alternatives?|switch(?:ing)? to|"
    r"would (?:it|the|this|that|we|they)\b.*\b(?:better|more|preferable)|why not|do we (?:really )?need|"
    r"is (?:it|this|that) (?:really|the right)|what if|or should|change (?:to|from))\b", re.IGNORECASE)
_OLD_SPACE, _NEW_SPACE = re.compile(r"\s+([.,;:!?])"), re.compile(r" ([.,;:!?])")
PATTERNS: dict[str, tuple[Callable[[str], object], Callable[[str], object]]] = {
    "bullet split": (re.compile(r"\s*[•●▪◦]\s*").split, text_units._BULLET.split),
    "space before punctuation": (lambda s: _OLD_SPACE.sub(r"\1", s), lambda s: _NEW_SPACE.sub(r"\1", s)),
    "e-mail": (re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b").search, rule_filter._EMAIL.search),
    "identifier": (re.compile(r"\b\d+(?:\.\d+)*(?:\([A-Za-z0-9]{1,4}\))+").findall, terms._IDENTIFIER.findall),
    "challenge": (lambda s: bool(_OLD_CHALLENGE.search(normalize(s))), rule_evaluator.challenges),
}
OLD_LAYOUT = (re.compile(r"([A-Za-z]+)[-\u00ad]$"), re.compile(r"[A-Za-z]+-[A-Za-z]+"))


def _old_mac(data) -> str:
    return hmac.new(KEY, canonical(data), hashlib.sha256).hexdigest()


def _old_check(data) -> bool:
    return hmac.compare_digest(data["mac"].encode(), _old_mac(data).encode())


def _records(text: str) -> list[dict]:
    """Five records of the flow's sizes, each a dict of corpus text (what the canonical JSON reads)."""
    out = []
    for size in (19_000, 19_000, 12_000, 12_000, 4_000):
        body = (text * (size // max(1, len(text)) + 1))[:size]
        out.append({"request_id": "bench-1", "policy_version": "p", "trace": [], "facts": [
            {"quote": body[i:i + 900], "pdf": "x.pdf", "page": 1, "chunk_id": f"x-chunk-{i}"}
            for i in range(0, len(body), 900)]})
    return out


def _seals_per_question(records: list[dict], old: bool) -> float:
    """Seconds for one question's seals: five sealed, four checked by the next stage, the answer by the page."""
    sealer = RecordSealer(KEY)
    started = time.thread_time()
    sealed = []
    for record in records:
        sealed.append({**record, "mac": _old_mac(record) if old else sealer.mac(record)})
    for record in [*sealed[:4], sealed[-1]]:
        assert _old_check(record) if old else sealer.problem(record) is None
    return time.thread_time() - started


def _patterns(sentences: list[str], old: bool) -> dict[str, float]:
    out = {}
    for name, arms in PATTERNS.items():
        fn = arms[0] if old else arms[1]
        started = time.thread_time()
        for sentence in sentences:
            fn(sentence)
        out[name] = time.thread_time() - started
    return out


def _layout(pages_by_pdf: list, old: bool) -> float:
    """(Issue 54 replaced the line-end pattern by ``layout._Text``, which reads a block's last characters: only the
    in-line pattern is swapped now; ``bench/linear_text.py`` times that change.)"""
    saved = layout._HYPHENATED
    if old:
        layout._HYPHENATED = OLD_LAYOUT[1]
    try:
        started = time.thread_time()
        for pages in pages_by_pdf:
            layout.extract_blocks(pages)
        return time.thread_time() - started
    finally:
        layout._HYPHENATED = saved


def _budget_checks(n: int = 10_000) -> float:
    budgets = Budgets(WebSettings(requests_per_minute=10**9, writes_per_minute=10**9))
    started = time.thread_time()
    for i in range(n):
        budgets.spend(f"10.0.{i % 250}.{i % 7}", "requests", "x")
        budgets.spend(f"10.0.{i % 250}.{i % 7}", "writes", "x")
    return (time.thread_time() - started) / n


def main() -> None:
    pdfs = sorted(CORPUS.glob("*.pdf"))
    pages_by_pdf = [read_pages(pdf) for pdf in pdfs]
    texts = [page.text for pages in pages_by_pdf for page in pages]
    sentences = [s for t in texts for s in split_sentences(t)]
    print(f"{len(pdfs)} PDFs, {len(texts)} pages, {len(sentences)} sentences; {ROUNDS} rounds")
    records = _records(" ".join(texts))
    arms: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        for old in (True, False):
            tag = "before" if old else "after"
            arms.setdefault(f"seals/question {tag}", []).append(
                statistics.median(_seals_per_question(records, old) for _ in range(50)))
            for name, seconds in _patterns(sentences, old).items():
                arms.setdefault(f"{name} (all sentences) {tag}", []).append(seconds)
            arms.setdefault(f"layout pass (19 PDFs) {tag}", []).append(_layout(pages_by_pdf, old))
    for name in sorted({a.rsplit(" ", 1)[0] for a in arms}):
        before, after = statistics.median(arms[f"{name} before"]), statistics.median(arms[f"{name} after"])
        print(f"{name:42s} before {before * 1000:9.3f} ms   after {after * 1000:9.3f} ms   ratio {after / before:5.2f}")
    print(f"{'page budget check, a write (2 spends)':42s} {_budget_checks() * 1e6:9.2f} µs")


if __name__ == "__main__":
    main()
