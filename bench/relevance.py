"""What the relevance model costs per question, beside the question's whole time (in-process, one at a time).

Every call of the model's ``score`` is timed (retrieval's rerank of every pooled sentence, the extractive
backend's sentence scores, R5; both mostly hit the per-(question, text) cache; the blend's embedding cosine counts
as the model's), and every other embedding call. Printed: pairs scored per question,
model ms per question (p50 / mean) beside the question's p50, and the process CPU per question split into the
relevance model, the embedding model and everything else (SQL client, fusion, assembly, validation: issue 16's
"model share").
"""

from __future__ import annotations

import os
import time
import uuid

from citestream.config import get_settings
from citestream.models import QuestionEvent
from citestream.pipeline import answer_inprocess
from citestream.deps import Deps

from ._support import ensure_corpus, percentile, unique_questions

N = int(os.environ.get("BENCH_RELEVANCE_QUESTIONS", "60"))


def _timed(owner, name: str, spent: dict, inside: list[str]) -> None:
    """Wrap ``owner.name`` so its wall and CPU time (all threads: torch runs the forward pass on several) add up.
    A call made inside another timed call (the relevance score's embedding cosine) counts for the outer one only."""
    call = getattr(owner, name)

    def timed(*args, **kwargs):
        if inside:
            return call(*args, **kwargs)
        inside.append(name)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return call(*args, **kwargs)
        finally:
            inside.pop()
            spent[name + " wall"] += time.perf_counter() - wall
            spent[name + " cpu"] += time.process_time() - cpu
            if name == "score":
                spent["pairs"] += len(args[1])

    setattr(owner, name, timed)


def main() -> None:
    ensure_corpus()
    deps = Deps(get_settings())
    deps.warm()
    model = deps.relevance
    spent: dict[str, float] = {}
    inside: list[str] = []
    _timed(model, "score", spent, inside)  # the cross-encoder and the blend's embedding cosine
    _timed(deps.embedder, "embed", spent, inside)  # the question's own embeddings; embed_one goes through embed
    cross = model.cross_pairs

    def counted(pairs):  # the pairs the cross-encoder actually reads (cross_k bounds them)
        spent["cross pairs"] += len(pairs)
        return cross(pairs)

    model.cross_pairs = counted  # type: ignore[method-assign]
    rows = []
    for q in unique_questions(N):
        spent.update({k: 0.0 for k in ("score wall", "score cpu", "embed wall", "embed cpu", "pairs", "cross pairs")})
        wall, cpu = time.perf_counter(), time.process_time()
        answer_inprocess(QuestionEvent(request_id=f"bench-rel-{uuid.uuid4().hex[:10]}", question=q), deps)
        rows.append({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, **spent})
    total = [r["wall"] * 1000 for r in rows]
    in_model = [r["score wall"] * 1000 for r in rows]
    cpu = {k: sum(r[k] for r in rows) for k in ("cpu", "score cpu", "embed cpu")}
    print(f"questions {N}, model {model.name} (text vectors cached across questions; scores per question)")
    print(f"question time   p50 {percentile(total, 50):8.1f} ms   mean {sum(total) / N:8.1f} ms")
    print(f"relevance model p50 {percentile(in_model, 50):8.1f} ms   mean {sum(in_model) / N:8.1f} ms   "
          f"texts scored/question {sum(r['pairs'] for r in rows) / N:.1f}, "
          f"read by the cross-encoder {sum(r['cross pairs'] for r in rows) / N:.1f} (cross_k {model.cross_k})")
    print(f"CPU per question {cpu['cpu'] / N * 1000:.0f} ms: relevance model {cpu['score cpu'] / cpu['cpu']:.1%}, "
          f"embedding {cpu['embed cpu'] / cpu['cpu']:.1%}, "
          f"everything else {1 - (cpu['score cpu'] + cpu['embed cpu']) / cpu['cpu']:.1%}")


if __name__ == "__main__":
    main()
