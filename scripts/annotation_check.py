"""Check a folder of written supervision against the packets it was written from (scripts/annotation_packets.py).

    .venv/bin/python scripts/annotation_check.py PACKETS_DIR ANNOTATION_DIR [--quiet]

ANNOTATION_DIR holds questions.jsonl and claims.jsonl (either may be missing). Every row is checked: fields and
their values, unit references that exist and whose copied text matches the packet, the answer phrase inside an
answering unit, no unit both answering and related, ids unique, no question repeated. Prints each error with its
line, then the counts by document, style, kind and label. Exit 1 when there is an error.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

STYLES = {"direct", "reworded", "typo", "acronym", "background", "scenario"}
UNANSWERABLE = {"near_miss_value", "near_miss_actor", "near_miss_condition", "false_premise", "other_authority"}
CLAIM_KINDS = {"paraphrase": "supported", "polarity": "contradicted", "actor": "contradicted",
               "number": "contradicted", "restrictor": "contradicted", "scope": "contradicted",
               "unsupported": "absent"}
REF = re.compile(r"^(\d+):(\d+)$")


def norm(text: str) -> str:
    return " ".join(text.split()).lower()


def load_packets(folder: Path) -> dict[str, dict[int, dict]]:
    out: dict[str, dict[int, dict]] = {}
    for path in folder.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out.setdefault(row["doc"], {})[row["passage"]] = row
    return out


def unit_text(packets, doc: str, ref: str) -> str | None:
    m = REF.match(ref)
    if not m or doc not in packets:
        return None
    passage = packets[doc].get(int(m.group(1)))
    return None if passage is None else passage["units"].get(m.group(2))


def check_refs(errors, where, packets, row, field, passage, reach=2):
    refs = row.get(field)
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        errors.append(f"{where}: {field} must be a list of 'passage:unit' strings")
        return []
    texts = []
    for ref in refs:
        text = unit_text(packets, row["doc"], ref)
        if text is None:
            errors.append(f"{where}: {field} {ref!r} is no quotable unit of {row['doc']}")
            continue
        if abs(int(ref.split(":")[0]) - passage) > reach:
            errors.append(f"{where}: {field} {ref!r} is more than {reach} passages from passage {passage}")
        texts.append(text)
    return texts


def check_parts(errors, where, row):
    """A multi-part question (batch 6): one list of answering units per part, each unit among ``answers``, and every
    answering unit stating some part."""
    parts = row["part_answers"]
    if not isinstance(parts, list) or len(parts) < 2 or not all(isinstance(p, list) and p for p in parts):
        errors.append(f"{where}: part_answers must hold a non-empty list of units for each of 2 or more parts")
        return
    if row.get("parts") != len(parts):
        errors.append(f"{where}: parts must be the number of part_answers' lists")
    stated, answers = {ref for part in parts for ref in part}, set(row.get("answers", []))
    if stated - answers:
        errors.append(f"{where}: part_answers names units that are not in answers: {sorted(stated - answers)}")
    if answers - stated:
        errors.append(f"{where}: answers names units that state no part: {sorted(answers - stated)}")
    if len(stated) < 2:
        errors.append(f"{where}: the parts must be answered by different units")


def check_questions(path: Path, packets, errors, seen_ids, stats):
    questions = set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{path.name}:{n}"
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not JSON ({exc})")
            continue
        for key in ("id", "doc", "passage", "question", "style", "answerable", "answers", "related"):
            if key not in row:
                errors.append(f"{where}: missing {key}")
        if any(k not in row for k in ("id", "doc", "passage", "question", "answerable")):
            continue
        if row["id"] in seen_ids:
            errors.append(f"{where}: duplicate id {row['id']}")
        seen_ids.add(row["id"])
        if row["doc"] not in packets or row["passage"] not in packets[row["doc"]]:
            errors.append(f"{where}: no passage {row['passage']} in {row['doc']}")
            continue
        q = row["question"].strip()
        if len(q.split()) < 4:
            errors.append(f"{where}: question too short")
        if norm(q) in questions:
            errors.append(f"{where}: question repeated")
        questions.add(norm(q))
        if row.get("style") not in STYLES:
            errors.append(f"{where}: style must be one of {sorted(STYLES)}")
        answers = check_refs(errors, where, packets, row, "answers", row["passage"])
        related = check_refs(errors, where, packets, row, "related", row["passage"])
        if set(row.get("answers", [])) & set(row.get("related", [])):
            errors.append(f"{where}: a unit is both answering and related")
        if not related:
            errors.append(f"{where}: related needs at least one on-topic unit that does not answer")
        if row["answerable"] is True:
            if not answers:
                errors.append(f"{where}: an answerable question needs its answering units")
            phrase = row.get("answer_phrase", "")
            if not phrase or not any(norm(phrase) in norm(t) for t in answers):
                errors.append(f"{where}: answer_phrase must be a verbatim span of an answering unit")
            if row.get("kind"):
                errors.append(f"{where}: kind is for unanswerable questions only")
            if "part_answers" in row:
                check_parts(errors, where, row)
        elif row["answerable"] is False:
            if row.get("answers"):
                errors.append(f"{where}: an unanswerable question has no answering units")
            if row.get("kind") not in UNANSWERABLE:
                errors.append(f"{where}: kind must be one of {sorted(UNANSWERABLE)}")
            if not str(row.get("why", "")).strip():
                errors.append(f"{where}: say why it cannot be answered")
            if row.get("kind") == "false_premise" and not str(row.get("premise", "")).strip():
                errors.append(f"{where}: a false premise names its premise")
        else:
            errors.append(f"{where}: answerable must be true or false")
        stats["doc"][row["doc"]] += 1
        stats["style"][row.get("style")] += 1
        stats["kind"]["answerable" if row["answerable"] else row.get("kind")] += 1


def check_claims(path: Path, packets, errors, seen_ids, stats):
    claims = set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{path.name}:{n}"
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not JSON ({exc})")
            continue
        for key in ("id", "doc", "unit", "claim", "kind", "label"):
            if key not in row:
                errors.append(f"{where}: missing {key}")
        if any(k not in row for k in ("id", "doc", "unit", "claim", "kind", "label")):
            continue
        if row["id"] in seen_ids:
            errors.append(f"{where}: duplicate id {row['id']}")
        seen_ids.add(row["id"])
        if unit_text(packets, row["doc"], row["unit"]) is None:
            errors.append(f"{where}: unit {row['unit']!r} is no quotable unit of {row['doc']}")
        expected = CLAIM_KINDS.get(row["kind"])
        if expected is None:
            errors.append(f"{where}: kind must be one of {sorted(CLAIM_KINDS)}")
        elif row["label"] != expected:
            errors.append(f"{where}: a {row['kind']} claim is labelled {expected}")
        if norm(row["claim"]) in claims:
            errors.append(f"{where}: claim repeated")
        claims.add(norm(row["claim"]))
        stats["claim_doc"][row["doc"]] += 1
        stats["claim_kind"][row["kind"]] += 1


def main(argv: list[str]) -> int:
    packets = load_packets(Path(argv[0]))
    folder = Path(argv[1])
    errors: list[str] = []
    stats: dict[str, Counter] = {k: Counter() for k in ("doc", "style", "kind", "claim_doc", "claim_kind")}
    seen: set[str] = set()
    for name, check in (("questions.jsonl", check_questions), ("claims.jsonl", check_claims)):
        if (folder / name).is_file():
            check(folder / name, packets, errors, seen, stats)
    for e in errors:
        print("ERROR", e)
    for key, counter in stats.items():
        if counter:
            print(f"{key}: " + ", ".join(f"{k}={v}" for k, v in sorted(counter.items(), key=str)))
    print(f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
