"""What the models cost per question, beside the question's whole time (in-process, one at a time), on the qa-v2
test split's questions as users wrote them (``_support.held_out_questions``; caches cleared before each pass over
them, so nothing is read from an earlier pass).

Every call of the relevance model's ``score`` is timed (retrieval's rerank of every pooled sentence, the extractive
backend's sentence scores, R5; mostly hits of the per-(question, text) cache) for the model's ms per question; and
every model forward pass (tokenizing and running a batch: ``Embedder.forward`` of the retrieval embedder and the
relevance embedder, the cross-encoder's ``cross_pairs``) for issue 16's "model share": the process CPU per question
split into those passes and everything else (SQL client, caches, fusion, assembly, validation, records).

Then the same under load: ``BENCH_RELEVANCE_TOGETHER`` questions at once in threads, so their model calls share
passes (``batching.Coalescer``) as in a loaded worker, in ``BENCH_RELEVANCE_ROUNDS`` rounds of new questions, and the
median share of the rounds. Concurrent threads make a process-wide clock useless inside a pass, so there a pass
counts the CPU of the thread that calls it, and two kinds of thread count as the model's whole: torch's OpenMP threads
(the process's threads Python did not start; they sleep between passes) and the judge's lanes (its ONNX runs,
``judge-lane`` threads, which run nothing else; the calling thread waits on them without CPU). Before 2026-12-02 the
lanes were missed, and the share read 18 % instead of 78 %.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from citestream.config import get_settings
from citestream.models import QuestionEvent
from citestream.inprocess import answer_inprocess
from citestream.deps import Deps
from citestream.embedding import get_relevance_embedder
from citestream.infra.procfs import stat_cpu
from citestream.relevance.onnx_runtime import LANE

from ._support import ensure_corpus, held_out_questions, percentile

N = int(os.environ.get("BENCH_RELEVANCE_QUESTIONS", "122"))
TOGETHER = int(os.environ.get("BENCH_RELEVANCE_TOGETHER", "4"))
ROUNDS = int(os.environ.get("BENCH_RELEVANCE_ROUNDS", "3"))


def _model_threads_cpu() -> float:
    """CPU seconds of this process's threads that run model passes only: torch's OpenMP pool (threads Python did not
    start) and the judge's ONNX lanes."""
    python = {t.native_id for t in threading.enumerate() if not t.name.startswith(LANE)}
    return sum(stat_cpu(task / "stat") for task in Path("/proc/self/task").iterdir() if int(task.name) not in python)


def _under_load(deps, owners: list[tuple[object, str]]) -> None:
    """``TOGETHER`` questions at a time: CPU per question and the forward passes' share of it."""
    spent = [0.0]
    lock = threading.Lock()
    for owner, method in owners:
        call = getattr(owner, method)

        def timed(*args, _call=call, **kwargs):
            start = time.thread_time()
            try:
                return _call(*args, **kwargs)
            finally:
                with lock:
                    spent[0] += time.thread_time() - start

        setattr(owner, method, timed)

    def ask(question: str) -> None:
        answer_inprocess(QuestionEvent(request_id=f"bench-load-{uuid.uuid4().hex[:10]}", question=question), deps)

    shares = []
    with ThreadPoolExecutor(TOGETHER) as pool:
        for round_ in range(1, ROUNDS + 1):  # a round's share moves ±1.5 points on a busy 2-core machine
            questions = held_out_questions()[:N]
            deps.relevance.clear_cache()
            list(pool.map(ask, questions[:TOGETHER]))  # the pool's threads started before the clocks
            spent[0], threads_cpu, cpu, wall = 0.0, _model_threads_cpu(), time.process_time(), time.perf_counter()
            list(pool.map(ask, questions[TOGETHER:]))
            threads_cpu, cpu, wall = (_model_threads_cpu() - threads_cpu, time.process_time() - cpu,
                                      time.perf_counter() - wall)
            n = N - TOGETHER
            forward = spent[0] + threads_cpu
            shares.append(forward / cpu)
            print(f"under load, round {round_} ({TOGETHER} at once, {n} questions, {n / wall:.1f} q/s): CPU per "
                  f"question {cpu / n * 1000:.0f} ms, model forward passes {forward / cpu:.1%}, everything else "
                  f"{(cpu - forward) / n * 1000:.0f} ms")
    print(f"under load: model forward passes {statistics.median(shares):.1%} (median of {ROUNDS} rounds)")


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
            elif name in ("cross-encoder", "background judge"):
                spent["cross pairs"] += len(args[0])

    setattr(owner, method, timed)

def main() -> None:
    ensure_corpus()
    deps = Deps(get_settings())
    deps.warm()
    model = deps.relevance
    spent: dict[str, float] = {}
    inside: list[str] = []
    judges = [deps.question_judge] + ([model.background] if model is not deps.question_judge else [])  # routed
    passes = {"question embedding": (deps.embedder, "forward"), "cross-encoder": (judges[0], "cross_pairs")}
    if len(judges) > 1:
        passes["background judge"] = (judges[1], "cross_pairs")
    if model.embedding_weight:
        passes["relevance embedder"] = (get_relevance_embedder(), "forward")  # the model's own (one per process)
    for name, (owner, method) in passes.items():
        _timed(owner, method, spent, inside, name)
    for judge in judges:
        _timed(judge, "score", spent, [], "score")  # a judge's whole call: caches, stored vectors, passes
    keys = ["score", *passes]
    rows = []
    model.clear_cache()
    for q in held_out_questions()[:N]:
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
    for owner, method in passes.values():  # unwrap: the under-load pass times them its own way
        delattr(owner, method)
    _under_load(deps, list(passes.values()))

if __name__ == "__main__":
    main()
