"""Merge checked annotation folders into one batch file of the written supervision, in the form training reads.

    .venv/bin/python scripts/annotation_merge.py PACKETS_DIR PREFIX OUT.jsonl ANNOTATION_DIR [ANNOTATION_DIR ...]

Each folder's questions.jsonl must pass scripts/annotation_check.py first. Every row gets the texts of its units as
the packet shows them (``answer_texts``, ``related_texts``: training aligns items by text, since the parser may
number passages anew), the pages of its answering units, its passage's page, and its id prefixed with ``PREFIX``
(``b6`` → ``b6w22-q0001``) so that batches never share an id.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from annotation_check import load_packets, unit_text


def merged(row: dict, packets: dict, prefix: str) -> dict:
    doc, answers = packets[row["doc"]], row.get("answers", [])
    return {**row, "id": prefix + row["id"], "page": doc[row["passage"]]["page"],
            "answer_texts": [unit_text(packets, row["doc"], r) for r in answers],
            "related_texts": [unit_text(packets, row["doc"], r) for r in row["related"]],
            "answer_pages": sorted({doc[int(r.split(":")[0])]["page"] for r in answers})}


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__)
        return 2
    packets, prefix, out = load_packets(Path(argv[0])), argv[1], Path(argv[2])
    lines = [line for folder in argv[3:] for line in (Path(folder) / "questions.jsonl").read_text().splitlines()]
    rows = [merged(json.loads(line), packets, prefix) for line in lines if line.strip()]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{out}: {len(rows)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
