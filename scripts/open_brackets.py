"""Quotes cut inside a bracket or quotation: units that leave one open, or close one they never opened (issue 52).

    python scripts/open_brackets.py ../shared/corpus ../shared/training-docs [--show N]

Parses and chunks every PDF of the folders as ingest does (no model, no database) and counts, over every child chunk,
the quotes (``core.text_units.read_units``) with more opening than closing brackets or curly quotation marks (cut
after "(Ref." or "“Part 11, Electronic Records;"), and those with more closing ones (the rest of such a cut).
``--show N`` prints N of the first kind.
"""

from __future__ import annotations

import argparse

from citestream.core.text_units import _opens, read_units
from citestream.ingest import pdf_paths
from citestream.ingest.pipeline import from_pdf, plan_chunks


def _balance(quote: str) -> int:
    """> 0: leaves a bracket or quotation open; < 0: closes one it never opened; 0: neither. Counted as the sentence
    splitter counts them (``text_units._opens``)."""
    brackets, quotes = _opens(quote)
    return 1 if brackets > 0 or quotes > 0 else -1 if brackets < 0 or quotes < 0 else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args()
    quotes, left_open, closing, shown = 0, 0, 0, []
    for path in pdf_paths(args.folders):
        children, _ = plan_chunks(from_pdf(path))  # the manifest changes no unit
        for child in children:
            for unit in read_units(child.text):
                quotes += 1
                balance = _balance(unit.quote)
                left_open += balance > 0
                closing += balance < 0
                if balance > 0:
                    shown.append(f"{path.name} p{child.page}: {unit.quote[:200]!r}")
    for line in shown[:args.show]:
        print(line)
    print(f"quotes: {quotes}; leaving a bracket or quotation open: {left_open}; closing one not opened: {closing}")


if __name__ == "__main__":
    main()
