"""What the models cost per question, beside the question's whole time (in-process, one at a time).

Every call of the relevance model's ``score`` is timed (retrieval's rerank of every pooled sentence, the extractive
backend's sentence scores, R5; mostly hits of the per-(question, text) cache) for the model's ms per question; and
every model forward pass (tokenizing and running a batch: ``Embedder.forward`` of the retrieval embedder and the
relevance embedder, the cross-encoder's ``cross_pairs``) for issue 16's "model share": the process CPU per question
split into those passes and everything else (SQL client, caches, fusion, assembly, validation, records).
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


def _timed(owner, method: str, spent: dict, inside: list[str], name: str) -> None:
    """Wrap ``owner.method`` so its wall and CPU time (all threads: torch runs the forward pass on several) add up
    under ``name``. A call made inside another call timed with the same ``inside`` list counts for the outer one."""
    call = getattr(owner, method)

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
            elif name == "cross-encoder":
                spent["cross pairs"] += len(args[0])

    setattr(owner, method, timed)

def main() -> None:
    ensure_corpus()
    deps = Deps(get_settings())
    deps.warm()
    model = deps.relevance
    spent: dict[str, float] = {}
    inside: list[str] = []
    passes = {"question embedding": (deps.embedder, "forward"), "cross-encoder": (model, "cross_pairs")}
    if model.embedding_weight:
        passes["relevance embedder"] = (model._embedder, "forward")
    for name, (owner, method) in passes.items():
        _timed(owner, method, spent, inside, name)
    _timed(model, "score", spent, [], "score")  # the relevance model's whole call: caches, stored vectors, passes
    keys = ["score", *passes]
    rows = []
    for q in unique_questions(N):
        spent.update({f"{k} {x}": 0.0 for k in keys for x in ("wall", "cpu")} | {"pairs": 0.0, "cross pairs": 0.0})
        wall, cpu = time.perf_counter(), time.process_time()
        answer_inprocess(QuestionEvent(request_id=f"bench-rel-{uuid.uuid4().hex[:10]}", question=q), deps)
        rows.append({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, **spent})
    total = [r["wall"] * 1000 for r in rows]
    in_model = [r["score wall"] * 1000 for r in rows]
    cpu = {k: sum(r[k + " cpu"] for r in rows) for k in keys}
    whole = sum(r["cpu"] for r in rows)
    forward = sum(cpu[k] for k in passes)
    print(f"questions {N}, model {model.name} (text vectors cached across questions; scores per question)")
    print(f"question time   p50 {percentile(total, 50):8.1f} ms   mean {sum(total) / N:8.1f} ms")
    print(f"relevance model p50 {percentile(in_model, 50):8.1f} ms   mean {sum(in_model) / N:8.1f} ms   "
          f"texts scored/question {sum(r['pairs'] for r in rows) / N:.1f}, "
          f"read by the cross-encoder {sum(r['cross pairs'] for r in rows) / N:.1f} (cross_k {model.cross_k})")
    print(f"CPU per question {whole / N * 1000:.0f} ms: model forward passes {forward / whole:.1%} ("
          + ", ".join(f"{k} {cpu[k] / whole:.1%}" for k in passes)
          + f"), everything else {1 - forward / whole:.1%} ({(whole - forward) / N * 1000:.0f} ms)")

if __name__ == "__main__":
    main()
