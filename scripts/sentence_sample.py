"""A seeded sample of the quotable sentence units of a folder of PDFs, for judging by eye (issue 47).

    python scripts/sentence_sample.py sample ../shared/corpus --n 100 --seed 47 --out before-corpus.jsonl
    python scripts/sentence_sample.py pair before-corpus.jsonl ../shared/corpus --out after-corpus.jsonl

``sample`` parses and chunks every PDF as ingest does (no model, no database) and draws ``n`` units among every
child's quotable units (``core.text_units.read_units``: what an answer may quote). ``pair`` finds, for each unit of
an earlier sample, the unit of the current code that covers the same words (most shared words on the same PDF and
page, else anywhere in the PDF), so the same printed sentences are judged before and after a change. Each line holds
the unit, where it is, the text around it in its chunk, and a ``label`` left empty for the judge: ``whole`` or the
defect seen (``footnote``, ``header``, ``page-break``, ``line-order``, ``heading``, ``cross-reference``, ``fragment``),
or ``not-quoted`` for a paired unit no longer quoted. ``count`` prints the labels' counts of judged files, and the
share of whole sentences among the units quoted.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

from citestream.core.text_units import read_units
from citestream.ingest import pdf_paths
from citestream.ingest.pipeline import from_pdf, plan_chunks


def units(folder: str) -> list[dict]:
    """Every quotable unit of the folder's PDFs, in reading order, with where it is and what surrounds it."""
    out = []
    for path in pdf_paths([folder]):
        children, _ = plan_chunks(from_pdf(path))  # the manifest changes no unit
        for i, child in enumerate(children):
            for unit in read_units(child.text):
                at = child.text.find(unit.quote[:40])
                context = child.text[max(0, at - 150): at + len(unit.quote) + 150] if at >= 0 else child.text[:600]
                out.append({"pdf": path.name, "page": child.page, "child": i, "kind": child.kind,
                            "unit": unit.quote, "context": " ".join(context.split()), "label": ""})
    return out


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{3,}", text.lower()))


def pair(earlier: list[dict], now: list[dict]) -> list[dict]:
    """For each earlier unit, the current unit of its PDF holding most of its words, one on its page first
    (``_overlap``); none (``unit`` empty: no longer quoted) when the best holds less than half of them."""
    out = []
    for old in earlier:
        want, page = _words(old["unit"]), old["page"]
        scored = [(_overlap(want, page, u), u) for u in now if u["pdf"] == old["pdf"]]
        score, best = max(scored, key=lambda s: s[0], default=((0.0, 0, False), None))
        if best is None or score[0] < 1 / 2:
            best = {"pdf": old["pdf"], "page": old["page"], "unit": "", "context": ""}
        out.append({**best, "was": old["unit"], "label": ""})
    return out


def _overlap(want: set[str], page: int, unit: dict) -> tuple[float, int, bool]:
    """How well ``unit`` covers the earlier unit's words: a unit on its page holding half of them first (a heading the
    earlier unit had glued on, now cut off, must not send the pair to another page where one still is), then the
    share held, then the shorter."""
    have = _words(unit["unit"])
    share = len(want & have) / max(1, len(want))
    return share if unit["page"] != page or share < 1 / 2 else 1 + share, -len(have), unit["page"] == page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample")
    s.add_argument("folder")
    s.add_argument("--n", type=int, default=100)
    s.add_argument("--seed", type=int, default=47)
    s.add_argument("--out", required=True)
    p = sub.add_parser("pair")
    p.add_argument("earlier")
    p.add_argument("folder")
    p.add_argument("--out", required=True)
    c = sub.add_parser("count")
    c.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.command == "count":
        for name in args.files:
            rows = [json.loads(line) for line in Path(name).read_text().splitlines() if line.strip()]
            labels = Counter(r["label"] or "unjudged" for r in rows)
            quoted = len(rows) - labels["not-quoted"]
            print(f"{name}: {len(rows)} units, {quoted} quoted, whole {labels['whole']} "
                  f"({labels['whole'] / max(1, quoted):.0%} of those quoted); "
                  + ", ".join(f"{k} {v}" for k, v in labels.most_common() if k != "whole"))
        return
    if args.command == "sample":
        rows = random.Random(args.seed).sample(units(args.folder), args.n)
    else:
        earlier = [json.loads(line) for line in Path(args.earlier).read_text().splitlines() if line.strip()]
        rows = pair(earlier, units(args.folder))
    Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} units written to {args.out}")


if __name__ == "__main__":
    main()
