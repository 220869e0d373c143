"""Write one readable packet per training document for the people (or helpers) who write supervision over it.

Each passage is an ingest child chunk, printed with every sentence unit the parser makes of it; a quotable unit
(one that can be an answer sentence) carries its reference ``[passage:unit]``, the others are shown for context.
Annotations refer to units by that reference and copy their text, so they survive later changes of the parser
(``citestream.training.written`` aligns them again by text).

    .venv/bin/python scripts/annotation_packets.py ../shared/training-docs OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from citestream.core.text_units import read_units, sentence_units
from citestream.ingest.pipeline import from_pdf, plan_chunks, slug


def packet(path: Path, root: Path) -> tuple[str, list[dict]]:
    doc = from_pdf(path, roots=[root])
    children, _ = plan_chunks(doc)
    lines = [f"# {path.name}", ""]
    rows = []
    for i, child in enumerate(children):
        quotable = {u.position: u.quote for u in read_units(child.text)}
        lines.append(f"=== passage {i} (page {child.page}) section: {child.section or '-'}")
        for position, unit in enumerate(sentence_units(child.text)):
            if position in quotable:
                lines.append(f"[{i}:{position}] {quotable[position]}")
            else:
                lines.append(f"    ({unit})")
        lines.append("")
        rows.append({"doc": path.name, "passage": i, "page": child.page, "section": child.section,
                     "units": {str(k): v for k, v in quotable.items()}})
    return "\n".join(lines), rows


def main(argv: list[str]) -> int:
    root, out = Path(argv[0]).resolve(), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for entry in json.loads((root / "manifest.json").read_text()):
        text, rows = packet(root / entry["file"], root)
        name = slug(Path(entry["file"]).stem)
        (out / f"{name}.txt").write_text(text)
        (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"{name}: {len(rows)} passages, {sum(len(r['units']) for r in rows)} quotable units")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
