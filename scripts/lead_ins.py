"""Lead-ins quoted without their list: sentence units ending in ":" that end their chunk (issue 52).

    python scripts/lead_ins.py ../shared/corpus ../shared/training-docs [--show N]

Parses and chunks every PDF of the folders as ingest does (no model, no database) and counts, over every child chunk,
the sentence units (``core.text_units.sentence_units``) that end in ":" (a lead-in announcing a list), and among them
those that are the last unit of their chunk: the list they announce is in another chunk (or nowhere), so the lead-in
is quoted alone. ``--show N`` prints N of those, each with the opening of the chunk after it.
"""

from __future__ import annotations

import argparse

from citestream.core.text_units import sentence_units
from citestream.ingest import pdf_paths
from citestream.ingest.pipeline import from_pdf, plan_chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args()
    lead_ins, ending, pdfs, shown = 0, 0, set(), []
    for path in pdf_paths(args.folders):
        children, _ = plan_chunks(from_pdf(path))  # the manifest changes no unit
        for i, child in enumerate(children):
            units = sentence_units(child.text)
            lead_ins += sum(u.rstrip().endswith(":") for u in units)
            if units and units[-1].rstrip().endswith(":"):
                ending += 1
                pdfs.add(path.name)
                after = children[i + 1] if i + 1 < len(children) else None
                nxt = "-" if after is None else f"p{after.page} [{after.kind}] {after.text[:160]!r}"
                shown.append(f"{path.name} p{child.page} [{child.kind}] ...{units[-1][-120:]!r}\n    next: {nxt}")
    for line in shown[:args.show]:
        print(line)
    print(f"lead-ins: {lead_ins}; ending their chunk: {ending}, in {len(pdfs)} PDFs")


if __name__ == "__main__":
    main()
