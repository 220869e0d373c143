"""What the relevance model costs per question, beside the question's whole time (in-process, one at a time).

Every call of the model's ``score`` is timed (retrieval's rerank, the extractive backend's sentence scores, R5;
R5 mostly hits the per-(question, text) cache). Printed: pairs scored per question, model ms per question
(p50 / mean) and its share of the question's time, beside the question's p50.
"""

from __future__ import annotations

import os
import time
import uuid

from citestream.config import get_settings
from citestream.models import QuestionEvent
from citestream.pipeline import answer_inprocess
from citestream.streams.deps import Deps

from ._support import ensure_corpus, percentile, questions

N = int(os.environ.get("BENCH_RELEVANCE_QUESTIONS", "60"))


def main() -> None:
    ensure_corpus()
    deps = Deps(get_settings())
    deps.warm()
    model = deps.relevance
    spent = {"s": 0.0, "pairs": 0}
    score = model.score

    def timed(question, texts):
        t0 = time.perf_counter()
        try:
            return score(question, texts)
        finally:
            spent["s"] += time.perf_counter() - t0
            spent["pairs"] += len(texts)

    model.score = timed
    rows = []
    for i, q in enumerate(questions(N)):
        q = f"{q} ({i})"  # a fresh question text each time: the score cache must not make the model look free
        spent.update(s=0.0, pairs=0)
        t0 = time.perf_counter()
        answer_inprocess(QuestionEvent(request_id=f"bench-rel-{uuid.uuid4().hex[:10]}", question=q), deps)
        rows.append((time.perf_counter() - t0, spent["s"], spent["pairs"]))
    total = [r[0] * 1000 for r in rows]
    in_model = [r[1] * 1000 for r in rows]
    print(f"questions {N}, model {model.name}")
    print(f"question time   p50 {percentile(total, 50):8.1f} ms   mean {sum(total) / N:8.1f} ms")
    print(f"model time      p50 {percentile(in_model, 50):8.1f} ms   mean {sum(in_model) / N:8.1f} ms   "
          f"pairs/question {sum(r[2] for r in rows) / N:.1f}")
    print(f"model share of a question's time: {sum(in_model) / sum(total):.1%}")


if __name__ == "__main__":
    main()
