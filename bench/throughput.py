"""Questions/s and p50/p99 latency through all five agents, beside the same stage functions in-process and beside
the raw embedding of the same questions; one worker against two in one consumer group.

Every arm answers the qa-v2 test split's questions as users wrote them (``_support.held_out_questions``: long,
reworded, with typos and background; the first ``BENCH_QUESTIONS``, all 122 by default), each arm in a process of
its own or with its caches cleared, so no arm reads another's scores; over the ingested ../shared/corpus. Warm-up
questions are templates, never the measured ones. Printed side by side:

* the questions' own embedding, one at a time: the one model pass a question needs at the least; by ONNX Runtime
  as served, and by PyTorch (``CITESTREAM_EMBEDDING_RUNTIME=torch``);
* the stage functions in-process, one question at a time;
* one worker through Kafka, all questions published at once (latency includes the queue), its retrieve agent
  taking questions in groups of ``questions_together`` (their model passes batched), and the same worker taking
  them one at a time (``CITESTREAM_QUESTIONS_TOGETHER=1``);
* two workers in one consumer group (the topics' 4 partitions split between them), each at one thread a model
  pass as every process (``CITESTREAM_MODEL_THREADS``);
* one worker with the judge run by PyTorch in fp32 instead of ONNX Runtime in int8 (``TORCH``), one with the
  embedders run by PyTorch instead of ONNX Runtime in fp32 (``TORCH_EMBEDDINGS``), and one scoring
  with the relevance embedder's cosine alone, as before the judge (``COSINE``): what each lever costs or saves;
* with ``BENCH_RELEVANCE_EMBEDDER=<folder>`` (another relevance embedder, such as the one tuned on
  all-mpnet-base-v2), that embedder's question embedding alone and one worker scoring with it, beside the shipped
  one's: the corpus is ingested under it first, so its sentence vectors are stored as the shipped one's are.

Each stream arm runs against a broker of its own, started empty for it (``_support.fresh_broker``): the embedded
broker keeps its store in one JSON snapshot and its CPU per record grows with it (2.8 → 10.3 CPU seconds for the
same 122 questions as the snapshot grew from 56 to 113 MB), so on a shared broker each arm was slowed by the arms
before it. The store each arm leaves is printed beside it.

Ratios: system / embedding (issue 16: how far the system is from its one unavoidable model pass), stream /
in-process (the cost of the topics), two workers / one. Beside them, what the records' MACs cost a question
(issue 41): sealing its five records as the agents publish them and checking the four a stage reads, timed alone
on real records, against a question in-process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from citestream.ops.client import ask_many
from citestream.config import get_settings
from citestream.deps import Deps
from citestream.embedding import Embedder, relevance_embedder_at
from citestream.models import QuestionEvent
from citestream.flow import QUESTION_PATH
from citestream.inprocess import answer_inprocess, run_steps

from ._support import (CORPUS, Worker, ensure_corpus, fresh_broker, held_out_questions, percentile,
                       unique_questions)

N = int(os.environ.get("BENCH_QUESTIONS", "122"))
CANDIDATE = os.environ.get("BENCH_RELEVANCE_EMBEDDER", "")
TORCH = {"CITESTREAM_JUDGE_RUNTIME": "torch"}
TORCH_EMBEDDINGS = {"CITESTREAM_EMBEDDING_RUNTIME": "torch"}
COSINE = {"CITESTREAM_RELEVANCE_EMBEDDING_WEIGHT": "1", "CITESTREAM_RELEVANCE_ANSWER_THRESHOLD": "0.60",
          "CITESTREAM_RELEVANCE_BACKSTOP": "0.30"}
"""The relevance embedder's cosine alone with the thresholds chosen for it (policy qa-v2.7): the score before the
judge."""


def _events(tag: str, warm: bool = False) -> list[QuestionEvent]:
    questions = unique_questions(8, tag) if warm else held_out_questions()[:N]
    return [QuestionEvent(request_id=f"bench-{tag}-{uuid.uuid4().hex[:10]}-{i}", question=q)
            for i, q in enumerate(questions)]


def _row(latencies: list[float], elapsed: float) -> dict:
    return {"answered": len(latencies), "qps": len(latencies) / elapsed,
            "p50_ms": percentile(latencies, 50) * 1000, "p99_ms": percentile(latencies, 99) * 1000}


def run_embedding(embedder: Embedder, tag: str = "embed") -> dict:
    latencies = []
    started = time.monotonic()
    for event in _events(tag):
        t0 = time.monotonic()
        embedder.embed_one(event.question)
        latencies.append(time.monotonic() - t0)
    return _row(latencies, time.monotonic() - started)


def run_inprocess(deps: Deps) -> dict:
    deps.relevance.clear_cache()
    latencies = []
    started = time.monotonic()
    for event in _events("inproc"):
        t0 = time.monotonic()
        answer_inprocess(event, deps)
        latencies.append(time.monotonic() - t0)
    return _row(latencies, time.monotonic() - started)


def run_sealing(deps: Deps, rounds: int = 50) -> float:
    """Milliseconds per question the MACs add: sealing its five records for their topics (beyond the plain JSON the
    agents wrote before) and checking the four a stage reads from their decoded JSON, as the agents do."""
    records = []
    for event in _events("seal", warm=True)[:5]:
        record = event
        for step in QUESTION_PATH:
            record = run_steps(record, [step], deps)
            records.append((record, json.loads(deps.sealer.payload(record)) if step.sink != "answers" else None))

    def timed(work) -> float:
        started = time.perf_counter()
        for _ in range(rounds):
            for record, data in records:
                work(record, data)
        return (time.perf_counter() - started) * 1000 / rounds / 5

    plain = timed(lambda record, _data: record.model_dump_json())
    sealed = timed(lambda record, data: (deps.sealer.payload(record), data is None or deps.sealer.problem(data)))
    return sealed - plain


def run_stream(workers: int, tag: str, env: dict[str, str] | None = None) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="citestream-bench-"))
    started_workers: list[Worker] = []
    with fresh_broker(folder) as broker:
        env = {**(env or {}), "CITESTREAM_BROKER_URL": broker.url}
        settings = get_settings().model_copy(update={"broker_url": broker.url})
        try:
            for i in range(workers):
                started_workers.append(Worker(folder / f"worker-{i}.log", env=env))
            ask_many(_events(f"warm{tag}", warm=True)[:2 * workers], timeout_s=300, settings=settings)  # first passes
            events = _events(tag)
            started = time.monotonic()
            replies, latency = ask_many(events, timeout_s=max(300, N * 5), settings=settings)
            elapsed = time.monotonic() - started
        finally:
            for worker in started_workers:
                worker.stop()
        store_mb = broker.store_bytes() / 1e6
    row = _row(list(latency.values()), elapsed)
    row["answered"] = len(replies)
    row["store_mb"] = store_mb
    return row


def candidate_arms() -> list[tuple[str, dict]]:
    """Another relevance embedder's rows: its question embedding alone, one worker scoring with it (its sentence
    vectors ingested first; the corpus is then ingested again under the shipped embedder by ``main``)."""
    if not CANDIDATE:
        return []
    name = Path(CANDIDATE).name
    subprocess.run([sys.executable, "-m", "citestream", "ingest", str(CORPUS)], check=True,
                   env={**os.environ, "CITESTREAM_RELEVANCE_EMBEDDER": CANDIDATE})
    embed = run_embedding(relevance_embedder_at(Path(CANDIDATE)), "embedcand")
    one = run_stream(1, "cand", {"CITESTREAM_RELEVANCE_EMBEDDER": CANDIDATE})
    return [(f"question embedding alone, {name}", embed), (f"one worker, 4 together, relevance embedder {name}", one)]


def main() -> None:
    candidate = candidate_arms()
    ensure_corpus()
    deps = Deps(get_settings())
    deps.warm()
    embed = run_embedding(deps.embedder)
    embed_torch = run_embedding(Embedder(threads=deps.settings.model_threads), "embed-torch")
    inproc = run_inprocess(deps)
    sealing_ms = run_sealing(deps)
    single = run_stream(1, "single", {"CITESTREAM_QUESTIONS_TOGETHER": "1"})
    one = run_stream(1, "one")
    two = run_stream(2, "two")
    torch_arm = run_stream(1, "torch", TORCH)
    torch_embeddings = run_stream(1, "torch-embeddings", TORCH_EMBEDDINGS)
    cosine = run_stream(1, "cosine", COSINE)
    print(f"\n{N} qa-v2 test questions per arm over ../shared/corpus, extractive backend, relevance model on "
          f"({deps.relevance.name}, cross_k {deps.relevance.cross_k}), 2 cores")
    together = get_settings().questions_together
    print(f"{'arm':<48}{'answered':>9}{'q/s':>9}{'p50 ms':>10}{'p99 ms':>10}{'broker MB':>10}")
    for name, r in (("question embedding alone, one at a time", embed),
                    ("question embedding alone, PyTorch", embed_torch),
                    ("stage functions in-process", inproc),
                    ("five agents via Kafka, one worker, one at a time", single),
                    (f"five agents via Kafka, one worker, {together} together", one),
                    ("five agents via Kafka, two workers", two),
                    ("one worker, the judge in PyTorch fp32", torch_arm),
                    ("one worker, the embedders in PyTorch", torch_embeddings),
                    ("one worker, cosine alone (before the judge)", cosine), *candidate):
        store = f"{r['store_mb']:>10.1f}" if "store_mb" in r else f"{'':>10}"
        print(f"{name:<48}{r['answered']:>9}{r['qps']:>9.1f}{r['p50_ms']:>10.0f}{r['p99_ms']:>10.0f}{store}")
    print(f"system (one worker) / question embedding: {one['qps'] / embed['qps']:.3f}")
    print(f"stream (one worker) / in-process: {one['qps'] / inproc['qps']:.2f}")
    print(f"{together} together / one at a time (one worker): {one['qps'] / single['qps']:.2f}")
    print(f"two workers / one worker: {two['qps'] / one['qps']:.2f}")
    print(f"the judge in PyTorch fp32 / in int8 (one worker): {torch_arm['qps'] / one['qps']:.2f}")
    print(f"the embedders in PyTorch / in ONNX Runtime (one worker): {torch_embeddings['qps'] / one['qps']:.2f}; "
          f"a question's embedding alone: {1000 / embed_torch['qps']:.1f} ms against {1000 / embed['qps']:.1f} ms")
    print(f"cosine alone / the judge (one worker): {cosine['qps'] / one['qps']:.2f}")
    if candidate:
        print(f"relevance embedder {Path(CANDIDATE).name} / the shipped one (one worker): "
              f"{candidate[1][1]['qps'] / one['qps']:.2f}; question embedding alone: "
              f"{1000 / candidate[0][1]['qps']:.0f} ms against {1000 / embed['qps']:.0f} ms")
    print(f"records' MACs, sealed and checked, per question: {sealing_ms:.2f} ms "
          f"({sealing_ms / (1000 / inproc['qps']):.1%} of a question in-process)")
    print("(stream latency is measured from publish with all questions sent at once, so it includes queueing)")


if __name__ == "__main__":
    main()
