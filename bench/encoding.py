"""What one question's embedding costs with each relevance embedder: the shipped one (MiniLM-L6) and, with
``BENCH_RELEVANCE_EMBEDDER=<folder>``, another (all-mpnet-base-v2, tuned or not). The answer flow embeds each
question once with it (corpus sentences are read from what ingest stored), so this is what a larger encoder adds
to a question. Wall and CPU milliseconds per question, one at a time; CPU says more on cores other jobs share.
No servers needed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from citestream.embedding import Embedder, get_relevance_embedder, relevance_embedder_at

from ._support import unique_questions

N = int(os.environ.get("BENCH_QUESTIONS", "100"))
CANDIDATE = os.environ.get("BENCH_RELEVANCE_EMBEDDER", "")


def cost(embedder: Embedder, tag: str) -> tuple[float, float]:
    """Mean wall ms and CPU ms per question, after two warm-up questions."""
    questions = unique_questions(N + 2, tag)
    for q in questions[:2]:
        embedder.embed_one(q)
    wall, cpu = time.monotonic(), time.process_time()
    for q in questions[2:]:
        embedder.embed_one(q)
    return (time.monotonic() - wall) * 1000 / N, (time.process_time() - cpu) * 1000 / N


def main() -> None:
    rows = [("shipped relevance embedder", get_relevance_embedder(), "shipped")]
    if CANDIDATE:
        rows.append((Path(CANDIDATE).name, relevance_embedder_at(Path(CANDIDATE)), "candidate"))
    print(f"{N} distinct questions, one at a time")
    print(f"{'relevance embedder':<40}{'dim':>5}{'wall ms':>9}{'CPU ms':>8}")
    for name, embedder, tag in rows:
        wall, cpu = cost(embedder, tag)
        print(f"{name:<40}{embedder.dim:>5}{wall:>9.1f}{cpu:>8.1f}")


if __name__ == "__main__":
    main()
