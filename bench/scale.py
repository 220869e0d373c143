"""Cost per question and retrieval quality as the corpus grows: 1×, 10× and 100× ../shared/corpus.

The 1× database is the real ingest of the corpus. The larger ones are synthetic (issue 16 allows it):
the corpus' documents copied under other doc_ids, every copy with light text perturbation (one word in
nine dropped, a different one per copy) and its embeddings moved by small seeded noise, so copies are
near-duplicates that compete with the original, not exact ties. Each grown database is built once and kept
(``citestream_bench_x10``, ``citestream_bench_x100``); the build time is printed when it is built.

Printed per scale, side by side on the same questions:

- one lexical list (child chunks, top 40), mean ms, per ranker: ``bm25_scan`` (N, length and document
  frequencies counted from the corpus per query: the SQL before issue 16), ``bm25`` (the same figures read
  from the tables ingest keeps), ``ts_rank_cd``;
- ``bm25_memory``: the same BM25 from the worker's in-memory copy of the index (``store/memory_index.py``),
  the seconds its first build takes, the seconds its update takes after one document is written again, and the
  megabytes of its child-chunk matrix;
- the same list from ``bm25s`` in-process (built from Postgres' lexemes per worker): ms, build seconds,
  and the share of SQL ``bm25``'s top 40 it returns;
- hybrid retrieval recall@8 and MRR on the golden sets' answerable items (a copy of an expected page counts);
- one question through every stage in-process (extractive backend, relevance model on), mean ms, with the
  lexical lists from ``bm25`` and from ``bm25_memory``.

Writes docs/figures/scale.png. Run: ``python -m bench.scale`` (``SCALES=1,10`` to skip 100×).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
from sqlalchemy import text

from citestream import infra
from citestream.config import PROJECT_ROOT, get_settings
from citestream.embedding import get_embedder, get_relevance_embedder, relevance_embedder_name
from citestream.models import QuestionEvent
from citestream.inprocess import answer_inprocess
from citestream.core.policy import RetrievalPolicy
from citestream.store import ChunkSearch, ChunkStore, SentenceVectors, engine_for, sentence_vectors
from citestream.store.db import as_array
from citestream.deps import Deps
from citestream.core.text_units import scored_units

from ._support import QUESTIONS, ensure_corpus
from .retrieval import GOLDEN, evaluate, load_items, summarise

SCALES = [int(s) for s in os.environ.get("SCALES", "1,10,100").split(",")]
RANKERS = ("bm25_scan", "bm25", "ts_rank_cd", "bm25_memory")
PIPELINE_QUESTIONS = 10
COLUMNS = "chunk_id, doc_id, kind, parent_id, seq, pdf, page, section, authority, text, embedding"


def _url(base: str, factor: int) -> str:
    return base if factor == 1 else f"{base.rsplit('/', 1)[0]}/citestream_bench_x{factor}"


def _perturb(words: list[str], copy: int) -> str:
    return " ".join(w for i, w in enumerate(words) if (i + copy) % 9 != 0 or len(words) < 9)


def grow(base_url: str, factor: int) -> float | None:
    """Build the database holding ``factor`` copies of the 1× corpus; seconds taken, None when it already exists."""
    settings = get_settings()
    url = _url(base_url, factor)
    infra.servers(settings)[0].ensure_database(url.rsplit("/", 1)[1].split("?")[0])
    env = {**os.environ, "CITESTREAM_DATABASE_URL": url}
    subprocess.run([sys.executable, "-m", "citestream", "migrate"], env=env, cwd=PROJECT_ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    source, target = engine_for(base_url), engine_for(url)
    with source.connect() as conn:
        want = conn.execute(text("SELECT count(*) FROM chunks")).scalar_one() * factor
        documents = conn.execute(text("SELECT doc_id, pdf, title, source, authority, content_sha256, pages, "
                                      "chunk_count, metadata FROM documents")).all()
        rows = conn.execute(text(f"SELECT {COLUMNS} FROM chunks ORDER BY chunk_id")).all()
    with target.connect() as conn:
        if conn.execute(text("SELECT count(*) FROM chunks")).scalar_one() == want and \
                conn.execute(text("SELECT EXISTS (SELECT FROM sentence_vectors WHERE model = :m)"),
                             {"m": relevance_embedder_name()}).scalar_one():
            return None  # built before, with the sentence vectors of the relevance embedder the questions use
    print(f"building the {factor}x corpus ({want} chunks) ...", flush=True)
    started = time.perf_counter()
    rng = np.random.default_rng(factor)
    with target.begin() as conn:
        conn.execute(text("TRUNCATE documents, sentence_vectors CASCADE"))
        conn.execute(text("SET LOCAL maintenance_work_mem = '1GB'"))
        conn.execute(text("DROP INDEX chunks_embedding_hnsw_idx"))  # built once at the end: faster than per row
        raw = conn.connection.driver_connection
        for copy in range(factor):
            suffix = "" if copy == 0 else f"~{copy}"
            for d in documents:
                conn.execute(text("INSERT INTO documents (doc_id, pdf, title, source, authority, content_sha256, "
                                  "pages, chunk_count, metadata) VALUES (:doc_id, :pdf, :title, :source, "
                                  ":authority, :sha, :pages, :count, CAST(:metadata AS jsonb))"),
                             {"doc_id": d.doc_id + suffix, "pdf": d.pdf, "title": d.title, "source": d.source,
                              "authority": d.authority, "sha": d.content_sha256, "pages": d.pages,
                              "count": d.chunk_count, "metadata": json.dumps(d.metadata)})
            with raw.cursor().copy(f"COPY chunks ({COLUMNS}) FROM STDIN") as out:
                for r in rows:
                    vector = None if r.embedding is None else as_array(r.embedding)
                    if copy and vector is not None:
                        vector = _moved(vector, rng)
                    out.write_row((r.chunk_id + suffix, r.doc_id + suffix, r.kind,
                                   r.parent_id + suffix if r.parent_id else None, r.seq, r.pdf, r.page, r.section,
                                   r.authority, _perturb(r.text.split(), copy) if copy else r.text,
                                   None if vector is None else "[" + ",".join(f"{x:.6f}" for x in vector) + "]"))
        copy_sentence_vectors(source, conn, [r for r in rows if r.kind == "child"], factor, rng)
        conn.execute(text("CREATE INDEX chunks_embedding_hnsw_idx ON chunks USING hnsw (embedding vector_cosine_ops) "
                          "WITH (m = 16, ef_construction = 64)"))
        conn.execute(text("INSERT INTO index_versions (corpus_digest, doc_count, chunk_count) "
                          "VALUES (:d, :n, :c)"), {"d": f"synthetic-x{factor}", "n": len(documents) * factor,
                                                    "c": want})
    return time.perf_counter() - started


def _moved(vector: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy's vector: the original's moved by small seeded noise, unit length again."""
    moved = vector + rng.normal(0, 0.02, vector.shape).astype(np.float32)
    return moved / np.linalg.norm(moved)


def copy_sentence_vectors(source, conn, children, factor: int, rng: np.random.Generator) -> None:
    """The vectors ingest keeps for the relevance blend, for every copy's sentence units, as ingest would have them:
    a copy's unit gets its original's vector moved like the chunk embeddings (``_moved``); the units of a chunk whose
    copy does not split like the original (or that the 1x database lacks) are embedded."""
    originals = [scored_units(r.text) for r in children]
    stored = SentenceVectors(source).fetch(list({u for units in originals for u in units}))
    vectors: dict[str, np.ndarray] = {}
    to_embed: list[str] = []
    for copy in range(factor):
        for r, original in zip(children, originals):
            units = scored_units(_perturb(r.text.split(), copy)) if copy else original
            if len(units) != len(original) or any(u not in stored for u in original):
                to_embed.extend(units)
                continue
            for unit, base in zip(units, original):
                vectors.setdefault(unit, _moved(stored[base], rng) if copy else stored[base])
    missing = [u for u in dict.fromkeys(to_embed) if u not in vectors]
    print(f"  sentence vectors: {len(vectors)} copied, {len(missing)} embedded", flush=True)
    vectors.update(zip(missing, get_relevance_embedder().embed(missing)))
    sentence_vectors.keep(conn, vectors)


def lexical_ms(search: ChunkSearch, ranker: str) -> float:
    started = time.perf_counter()
    for question in QUESTIONS:
        search.lexical(question, "MIXED", 40, ranker)
    return (time.perf_counter() - started) * 1000 / len(QUESTIONS)


class InProcessBM25:
    """The in-process arm of the comparison: ``bm25s`` over Postgres' own lexemes, built per worker from the index.

    Documents are the child chunks' tsvector lexemes, each repeated by its position count (tf); the query's
    lexemes come from the same ``to_tsvector('english', ...)`` as the stored column (one round trip).
    """

    def __init__(self, engine):
        import bm25s

        started = time.perf_counter()
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT chunk_id, array_agg(u.lexeme ORDER BY u.lexeme), "
                "array_agg(coalesce(array_length(u.positions, 1), 1) ORDER BY u.lexeme) "
                "FROM chunks, unnest(tsv) AS u WHERE kind = 'child' GROUP BY chunk_id ORDER BY chunk_id")).all()
        self.ids = [r[0] for r in rows]
        self.model = bm25s.BM25(k1=1.2, b=0.75)
        self.model.index([[lexeme for lexeme, tf in zip(r[1], r[2]) for _ in range(tf)] for r in rows],
                         show_progress=False)
        self.engine = engine
        self.build_s = time.perf_counter() - started

    def search(self, question: str, k: int = 40) -> list[str]:
        with self.engine.connect() as conn:
            terms = conn.execute(text("SELECT tsvector_to_array(to_tsvector('english', :q))"), {"q": question}).scalar()
        known = [t for t in terms if t in self.model.vocab_dict]
        if not known:
            return []
        docs, _ = self.model.retrieve([known], k=min(k, len(self.ids)), show_progress=False)
        return [self.ids[i] for i in docs[0]]


def in_process(search: ChunkSearch) -> dict:
    """ms per list, build seconds, and how much of SQL bm25's top 40 the in-process top 40 shares."""
    index = InProcessBM25(search.engine)
    index.search(QUESTIONS[0])
    started = time.perf_counter()
    lists = [index.search(q) for q in QUESTIONS]
    ms = (time.perf_counter() - started) * 1000 / len(QUESTIONS)
    shared = [len(set(mine) & {r.chunk_id for r in search.lexical(q, "MIXED", 40)}) / 40
              for q, mine in zip(QUESTIONS, lists)]
    return {"bm25s ms": ms, "bm25s build s": index.build_s, "bm25s shares": sum(shared) / len(shared)}


def one_document_update_s(search: ChunkSearch) -> float:
    """Seconds the in-memory copy takes to follow one document written again (its row rewritten and the index
    version moved, as an ingest does): what a worker pays after each ingest."""
    with search.engine.begin() as conn:
        conn.execute(text("UPDATE documents SET ingested_at = now() "
                          "WHERE doc_id = (SELECT min(doc_id) FROM documents)"))
        conn.execute(text("INSERT INTO index_versions (corpus_digest, doc_count, chunk_count) "
                          "SELECT corpus_digest, doc_count, chunk_count FROM index_versions "
                          "ORDER BY version DESC LIMIT 1"))
    started = time.perf_counter()
    search.lexical(QUESTIONS[0], "MIXED", 40, "bm25_memory")
    return time.perf_counter() - started


def pipeline_ms(url: str, ranker: str) -> float:
    deps = Deps(get_settings().model_copy(update={"database_url": url, "lexical_ranker": ranker}))
    answer_inprocess(QuestionEvent(request_id=f"scale-warm-{time.time_ns()}", question=QUESTIONS[0]), deps)
    deps.relevance.clear_cache()  # the model is shared by every Deps in the process: no arm rides on another's scores
    started = time.perf_counter()
    for i, question in enumerate(QUESTIONS[:PIPELINE_QUESTIONS]):
        answer_inprocess(QuestionEvent(request_id=f"scale-{time.time_ns()}-{i}", question=question), deps)
    return (time.perf_counter() - started) * 1000 / PIPELINE_QUESTIONS


def main() -> None:
    base_url = get_settings().database_url
    ensure_corpus()
    embedder = get_embedder()
    items = [i for path in sorted(GOLDEN.glob("golden_set*.jsonl")) for i in load_items(path)]
    results = {}
    for factor in SCALES:
        built = grow(base_url, factor) if factor > 1 else None
        url = _url(base_url, factor)
        search = ChunkSearch(engine_for(url))
        ChunkStore(search.engine).refresh_statistics()  # else the planner filters by kind and scans every vector
        with search.engine.connect() as conn:
            chunks = conn.execute(text("SELECT count(*) FROM chunks WHERE kind = 'child'")).scalar_one()
        started = time.perf_counter()
        search.lexical(QUESTIONS[0], "MIXED", 40, "bm25_memory")  # builds the worker's in-memory copy
        memory_build_s = time.perf_counter() - started
        memory_update_s = one_document_update_s(search)
        memory_mb = search._memory["child"].megabytes()
        for ranker in RANKERS:
            lexical_ms(search, ranker)  # warm the cache
        quality = summarise(evaluate(items, search, embedder, RetrievalPolicy(mode="hybrid")))
        results[factor] = {"child chunks": chunks, **{f"{r} ms": lexical_ms(search, r) for r in RANKERS},
                           "bm25_memory build s": memory_build_s, "bm25_memory update s": memory_update_s,
                           "bm25_memory MB": memory_mb,
                           **in_process(search),
                           "recall@8": quality["recall@8"], "mrr": quality["mrr"],
                           "question ms": pipeline_ms(url, "bm25"),
                           "question bm25_memory ms": pipeline_ms(url, "bm25_memory"), "build s": built}
        print(f"{factor:>4}x " + "  ".join(f"{k} {_fmt(v)}" for k, v in results[factor].items()), flush=True)
    one = results.get(1)
    if one:
        for factor, row in results.items():
            growth = {name: row[f"{name} ms"] / one[f"{name} ms"]
                      for name in ("question", "question bm25_memory", *RANKERS, "bm25s")}
            print(f"{factor:>4}x cost as a multiple of 1x: " + "  ".join(f"{k} {v:.2f}" for k, v in growth.items()))
    plot(results)


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) and value < 10 else f"{value:.0f}" if isinstance(value, float) \
        else str(value)


def plot(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    factors = sorted(results)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for ranker in (*RANKERS, "bm25s"):
        left.plot(factors, [results[f][f"{ranker} ms"] for f in factors], marker="o",
                  label=ranker + (" (in-process)" if ranker in ("bm25s", "bm25_memory") else " (SQL)"))
    left.set(xscale="log", yscale="log", xlabel="corpus size (× ../shared/corpus)", ylabel="ms per lexical list",
             title="lexical list, top 40 child chunks")
    left.legend()
    right.plot(factors, [results[f]["question ms"] for f in factors], marker="o", label="lexical lists: bm25 (SQL)")
    right.plot(factors, [results[f]["question bm25_memory ms"] for f in factors], marker="o",
               label="lexical lists: bm25_memory")
    right.legend()
    right.set(xscale="log", xlabel="corpus size (× ../shared/corpus)", ylabel="ms per question (in-process)",
              title="one question, every stage")
    fig.tight_layout()
    out = PROJECT_ROOT / "docs" / "figures" / "scale.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    print(f"wrote {out.relative_to(PROJECT_ROOT)}")


if __name__ == "__main__":
    main()
