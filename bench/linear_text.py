"""What issue 54's linear rewrites cost on ordinary text, before and after, arms alternated round by round.

The functions rewritten (``verification/numbers.py``, ``verification/checks.py``'s ``negated_where``, ingest's
``layout`` and ``chunking``), each on the corpus as the flow meets it: every sentence of the corpus PDFs as a claim
against the sentences around it (the claim judge's numbers and negation checks, per question's premise or claim),
and the layout and chunking of every corpus PDF. "Before" is the module as it is on ``BENCH_BEFORE_REF`` (main by
default), read from git and loaded beside today's. No servers: the PDFs are parsed once in the sandbox's child.
Times are the CPU time of the measuring thread; printed: each arm's median over the rounds, and after / before.

    BENCH_LINEAR_ROUNDS=5 python -m bench.linear_text
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable

from citestream.core.text_units import split_sentences
from citestream.ingest import chunking, layout
from citestream.ingest.pdf import read_pages
from citestream.verification import checks, numbers

from ._support import CORPUS

ROUNDS = int(os.environ.get("BENCH_LINEAR_ROUNDS", "5"))
BEFORE = os.environ.get("BENCH_BEFORE_REF", "main")


def _before(module: types.ModuleType) -> types.ModuleType:
    """``module`` as ``BEFORE`` had it, loaded under its own package (its relative imports read today's)."""
    path = module.__name__.replace(".", "/") + ".py"
    source = subprocess.run(["git", "show", f"{BEFORE}:{path}"], check=True, capture_output=True, text=True).stdout
    old = types.ModuleType(module.__name__ + "_before")
    old.__package__ = module.__package__
    sys.modules[old.__name__] = old  # where dataclasses look their module up
    exec(compile(source, f"{BEFORE}:{path}", "exec"), old.__dict__)  # the project's own source, as it was
    return old


def _timed(fn: Callable[[], object]) -> float:
    started = time.thread_time()
    fn()
    return time.thread_time() - started


def main() -> None:
    pdfs = sorted(CORPUS.glob("*.pdf"))
    pages_by_pdf = [read_pages(pdf) for pdf in pdfs]
    sentences = [s for pages in pages_by_pdf for page in pages for s in split_sentences(page.text)]
    contexts = [" ".join(sentences[max(0, i - 2):i + 3]) for i in range(len(sentences))]
    print(f"{len(pdfs)} PDFs, {len(sentences)} sentences; {ROUNDS} rounds; before = {BEFORE}")
    old_numbers, old_checks, old_layout, old_chunking = map(_before, (numbers, checks, layout, chunking))
    blocks = [layout.extract_blocks(pages) for pages in pages_by_pdf]
    arms: dict[str, dict[str, list[float]]] = {}

    def arm(name: str, tag: str, fn: Callable[[], object]) -> None:
        arms.setdefault(name, {}).setdefault(tag, []).append(_timed(fn))

    for _ in range(ROUNDS):
        for tag, num, chk, lay, chu in (("before", old_numbers, old_checks, old_layout, old_chunking),
                                        ("after", numbers, checks, layout, chunking)):
            arm("check_numbers (each sentence against its context)", tag,
                lambda num=num: [num.check_numbers(s, c) for s, c in zip(sentences, contexts, strict=True)])
            arm("negated_where (each sentence against its context)", tag,
                lambda chk=chk: [chk.negated_where(c, s) for s, c in zip(sentences, contexts, strict=True)])
            arm("extract_blocks (every corpus PDF)", tag,
                lambda lay=lay: [lay.extract_blocks(pages) for pages in pages_by_pdf])
            arm("child pieces and parents (every corpus PDF)", tag,
                lambda chu=chu: [chu.group_parents(chu.child_pieces_from_blocks(b)) for b in blocks])
    for name, by_tag in arms.items():
        before, after = statistics.median(by_tag["before"]), statistics.median(by_tag["after"])
        print(f"{name}: before {before:.3f} s, after {after:.3f} s, after / before {after / before:.2f}")


if __name__ == "__main__":
    main()
