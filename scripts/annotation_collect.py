"""Gather the annotators' folders into training-data/written/ (questions.jsonl, claims.jsonl): each unit reference
resolved to the unit's text as the packets had it, each item tagged with its annotator (the folder's name).

    .venv/bin/python scripts/annotation_collect.py PACKETS_DIR ANNOTATIONS_DIR [OUT_DIR]

ANNOTATIONS_DIR holds one folder per annotator (questions.jsonl, claims.jsonl); run scripts/annotation_check.py on
each first. Items are written sorted by id, so the output depends only on the items.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotation_check import load_packets, unit_text

QUESTION_FIELDS = ("id", "doc", "passage", "page", "question", "style", "answerable", "kind", "answers",
                   "answer_texts", "answer_pages", "answer_phrase", "related", "related_texts", "why", "premise",
                   "annotator")
CLAIM_FIELDS = ("id", "doc", "passage", "page", "unit", "unit_text", "claim", "kind", "label", "annotator")


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def main(argv: list[str]) -> int:
    packets = load_packets(Path(argv[0]))
    source = Path(argv[1])
    out = Path(argv[2]) if len(argv) > 2 else Path(__file__).resolve().parents[1] / "training-data" / "written"
    questions, claims = [], []
    for folder in sorted(p for p in source.iterdir() if p.is_dir()):
        for row in _rows(folder / "questions.jsonl"):
            row["answer_texts"] = [unit_text(packets, row["doc"], r) for r in row["answers"]]
            row["related_texts"] = [unit_text(packets, row["doc"], r) for r in row["related"]]
            row["answer_pages"] = sorted({packets[row["doc"]][int(r.split(":")[0])]["page"] for r in row["answers"]})
            row["annotator"] = folder.name
            questions.append({k: row[k] for k in QUESTION_FIELDS if row.get(k) not in (None, "")})
        for row in _rows(folder / "claims.jsonl"):
            row["unit_text"] = unit_text(packets, row["doc"], row["unit"])
            row["passage"] = int(row["unit"].split(":")[0])
            row["page"] = packets[row["doc"]][row["passage"]]["page"]
            row["annotator"] = folder.name
            claims.append({k: row[k] for k in CLAIM_FIELDS if row.get(k) not in (None, "")})
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("questions.jsonl", questions), ("claims.jsonl", claims)):
        rows.sort(key=lambda r: r["id"])
        (out / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(questions)} questions, {len(claims)} claims → {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
