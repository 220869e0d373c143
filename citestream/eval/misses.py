"""Sort the dev misses into classes before building: where does a question the product gets wrong go wrong?

``python -m citestream.eval.misses --set tests/golden/qa_v2_dev.jsonl --set tests/golden/qa_docs_dev.jsonl
--out DIR`` runs every item in-process through the question path, keeps each stage's record, and puts every miss
in exactly one class, decided from the records (never from the item's wording):

=================  ===================================================================================================
class              what the records show
=================  ===================================================================================================
retrieval          no fact on an expected page holds the answer phrase: the answer never reached the evidence
gate               refused before generation (``NOT_RELEVANT``, ``WRONG_AUTHORITY``, ``FALSE_PREMISE``) with the
                   answering passage among the facts
not_answering      refused ``NOT_ANSWERING`` (or no sentence passed the answer threshold) with the answering unit in
                   the prompt's evidence
unit_broken        answered on an expected page, but a quoted unit is not whole: a heading glued before it, a lead-in
                   ending in ":" without its list, a fragment (opens in lower case or ends without a stop)
neighbour          answered, but with another unit than the one that holds the answer phrase
answered_unanswerable  an unanswerable question answered
other              anything else (a refusal with the answer only in the facts, not in the evidence, and so on)
=================  ===================================================================================================

It refuses a held-out test split: misses are read item by item, so only dev is ever looked at.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from ..core.text_units import heading_end, read_units
from .calibration import choose_high
from .run_report import changed_items, sign_test
from .score import RIGHT
from .sets import GoldenItem, blind, contains_phrase, load_set, set_name

CLASSES = ("gate", "not_answering", "neighbour", "unit_broken", "retrieval", "answered_unanswerable", "other")
GATE_CODES = {"NOT_RELEVANT", "WRONG_AUTHORITY", "FALSE_PREMISE"}


@dataclass
class Miss:
    set: str
    id: str
    kind: str
    question: str
    cls: str
    detail: str
    quoted: list[str] = field(default_factory=list)
    answering_unit: str = ""
    refusal_code: str | None = None
    confidence: str | None = None


def broken(unit: str) -> str:
    """Why a quoted unit is not what a person would quote, or "" when it is whole."""
    text = unit.strip()
    if heading_end(text):
        return "heading glued"
    if text.endswith(":"):
        return "lead-in without its list"
    if text[:1].islower():
        return "fragment (opens mid-sentence)"
    if not text.rstrip("\"”')]").endswith((".", "!", "?", ";", ":")):
        return "fragment (no sentence end)"
    return ""


def _answering_unit(item: GoldenItem, blocks) -> str:
    """The unit of an evidence block on an expected page that holds an answer phrase ("" when none does)."""
    for block in blocks:
        if (block.pdf, block.page) not in item.expected_pages:
            continue
        for unit in read_units(block.text):
            if contains_phrase(unit.quote, item.must_contain_any):
                return unit.quote
        if contains_phrase(block.text, item.must_contain_any):
            return block.text[:300]
    return ""


def _holds_answer(item: GoldenItem, facts) -> bool:
    """A fact of the record on an expected page holds an answer phrase."""
    return any((f.pdf, f.page) in item.expected_pages and contains_phrase(f.quote, item.must_contain_any)
               for f in (facts.facts if facts else []))


def classify(item: GoldenItem, facts, prompt, answer, outcome: str, chunk_holds=None,
             open_facts=None) -> Miss | None:
    """The one class of a miss (None when the item passed), from the records its question left. ``chunk_holds``
    tells whether any stored chunk on an expected page holds an answer phrase whole (a retrieval miss can only be one
    when there is such a chunk to retrieve). ``open_facts`` are the facts retrieve finds with no backstop: a gate
    refusal whose answer is among them was retrieved and held back."""
    if outcome in RIGHT:
        return None
    base: dict[str, Any] = dict(set="", id=item.id, kind=item.style or item.perturbation or item.kind or item.category,
                question=item.question, refusal_code=answer.refusal_code if answer else None,
                confidence=answer.confidence if answer else None,
                quoted=[s.text for s in answer.sentences] if answer else [])
    if not item.answerable:
        return Miss(**base, cls="answered_unanswerable", detail=outcome)
    from ..llm.extractive import parse_prompt

    text = prompt.prompt.prompt_text if prompt is not None else ""
    blocks = parse_prompt(text)[0] if text else []
    unit = _answering_unit(item, blocks)
    in_facts = _holds_answer(item, facts)
    code = answer.refusal_code if answer else None
    held_back = code in GATE_CODES and _holds_answer(item, open_facts)
    if held_back and answer is not None and answer.status != "answered":
        return Miss(**base, cls="gate", detail=f"{code}; retrieved, held back by the gate", answering_unit=unit)
    if not unit and not in_facts:
        page_in_facts = any((f.pdf, f.page) in item.expected_pages for f in (facts.facts if facts else []))
        whole = chunk_holds is not None and chunk_holds(item)
        if chunk_holds is not None and not whole:
            return Miss(**base, cls="unit_broken", detail="the answer is split between two chunks")
        return Miss(**base, cls="retrieval",
                    detail="its page retrieved, not its chunk" if page_in_facts else "its page not retrieved")
    if answer is None or answer.status != "answered":
        if code in GATE_CODES and in_facts:
            return Miss(**base, cls="gate", detail=code or "", answering_unit=unit)
        if unit:
            return Miss(**base, cls="not_answering", detail=code or "refused", answering_unit=unit)
        return Miss(**base, cls="other", detail=f"refused {code}; answer in the facts, not in the evidence")
    on_page = [s for s in answer.sentences if (s.pdf, s.page) in item.expected_pages]
    reasons = [broken(s.text) for s in on_page]
    if any(reasons):
        return Miss(**base, cls="unit_broken", detail=next(r for r in reasons if r), answering_unit=unit)
    if unit:
        return Miss(**base, cls="neighbour", detail=outcome, answering_unit=unit)
    return Miss(**base, cls="other", detail=f"{outcome}; answer in the facts, not in the evidence")


def answering_chunks(engine, item: GoldenItem) -> set[str]:
    """The stored chunks on an expected page that hold an answer phrase whole."""
    from sqlalchemy import text

    with engine.connect() as conn:
        return {chunk_id for pdf, page in item.expected_pages for chunk_id, body in conn.execute(
            text("SELECT chunk_id, text FROM chunks WHERE pdf = :pdf AND page = :page"), {"pdf": pdf, "page": page})
            if contains_phrase(body, item.must_contain_any)}


def run(items: list[GoldenItem], deps) -> list[tuple]:
    """Every item through the question path in-process, keeping the facts, the prompt and the answer."""
    from pydantic import BaseModel

    from ..flow import QUESTION_PATH
    from ..inprocess import run_steps
    from ..models import ValidatedAnswer
    from .run import questions_for
    from .score import fetch_chunk_texts, score_item

    out = []
    questions = questions_for(items)
    open_deps = deps.without_backstop()
    for item in items:
        record: BaseModel = questions[item.id]
        kept: dict[str, BaseModel] = {}
        for step in QUESTION_PATH:
            record = run_steps(record, (step,), deps)
            kept[step.stage] = record
        answer = cast(ValidatedAnswer, kept["validate"])
        texts = fetch_chunk_texts(deps.engine, [s.chunk_id for s in answer.sentences])
        outcome = score_item(item, answer, texts).outcome
        open_facts = None
        if answer.refusal_code in GATE_CODES:  # what retrieve finds with no backstop: was the answer held back?
            question = questions[item.id].model_copy(update={"request_id": f"{questions[item.id].request_id}-open"})
            open_facts = run_steps(question, QUESTION_PATH[:1], open_deps)
        out.append((item, kept.get("retrieve"), kept.get("assemble"), answer, outcome, open_facts))
    return out


def table(misses: list[Miss], totals: dict[str, int]) -> str:
    """The miss table in Markdown: count per class and set, then three examples of each class."""
    sets = sorted(totals)
    counts = Counter((m.cls, m.set) for m in misses)
    lines = ["| class | " + " | ".join(f"{s} ({totals[s]} items)" for s in sets) + " | all |",
             "|---|" + "---:|" * (len(sets) + 1)]
    for cls in sorted(CLASSES, key=lambda c: -sum(counts[(c, s)] for s in sets)):
        row = [counts[(cls, s)] for s in sets]
        lines.append(f"| {cls} | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    lines.append("| **misses** | " + " | ".join(str(sum(m.set == s for m in misses)) for s in sets)
                 + f" | {len(misses)} |")
    for cls in CLASSES:
        examples = [m for m in misses if m.cls == cls][:3]
        if not examples:
            continue
        lines += ["", f"**{cls}**", ""]
        for m in examples:
            quoted = " / ".join(q[:160] for q in m.quoted) or "—"
            lines.append(f"- `{m.id}` ({m.kind}; {m.detail}) *{m.question[:160]}* — quoted: {quoted}"
                         + (f" — answering unit: {m.answering_unit[:200]}" if m.answering_unit else ""))
    return "\n".join(lines)


def against(before: list[dict], after: list[dict]) -> str:
    """Items right now and not before, and the reverse, over the items both runs hold, with the sign test's p: a
    dev gain of three or four items is what two trainings of one recipe differ by."""
    old, new = ({(r["set"], r["id"]): r["outcome"] in RIGHT for r in rows} for rows in (before, after))
    gained, lost = changed_items(old, new)
    both = old.keys() & new.keys()
    return (f"against the earlier run: {sum(new[k] for k in both)} right of {len(both)} (was "
            f"{sum(old[k] for k in both)}); {gained} gained, {lost} lost, sign test p {sign_test(gained, lost):.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--against", type=Path, help="an earlier --out folder: items gained and lost, sign test")
    args = parser.parse_args(argv)
    if any(blind(set_name(s)) for s in args.set):
        print("refusing to read a held-out test split item by item", file=sys.stderr)
        return 2
    from ..deps import get_deps
    from ..qa.validate.stage import runner_up
    from .score import best_relevance

    deps = get_deps()
    misses, totals, rows = [], {}, []
    for path in args.set:
        name = set_name(path)
        items = load_set(Path(path))
        totals[name] = len(items)
        for item, facts, prompt, answer, outcome, open_facts in run(items, deps):
            rows.append({"set": name, "id": item.id, "outcome": outcome, "answerable": item.answerable,
                         "kind": item.style or item.perturbation or item.kind,
                         "confidence": answer.confidence if answer else None,
                         "best": best_relevance(answer) if answer else None,
                         "runner_up": None if prompt is None else runner_up(  # what the confidence label reads
                             prompt.sentence_scores, prompt.answer_bundle,
                             {s.chunk_id for s in answer.sentences} if answer else set())})
            miss = classify(item, facts, prompt, answer, outcome, lambda i: bool(answering_chunks(deps.engine, i)),
                            open_facts)
            if miss is not None:
                miss.set = name
                misses.append(miss)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "misses.json").write_text(json.dumps([asdict(m) for m in misses], indent=1, ensure_ascii=False))
    (args.out / "items.json").write_text(json.dumps(rows, indent=1))
    text = table(misses, totals)
    (args.out / "misses.md").write_text(text + "\n")
    print(text)
    if args.against:
        print("\n" + against(json.loads((args.against / "items.json").read_text()), rows))
    scored = [(r["best"], r["runner_up"], r["outcome"] == "pass") for r in rows if r["best"] is not None]
    rule = choose_high(scored, sum(r["answerable"] for r in rows))
    print("\nHigh, chosen on these items (threshold, margin, answers, right):", rule)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
