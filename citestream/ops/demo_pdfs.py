"""Write the smoke documents of rag-loop-acceptance §2 as real PDFs (the demo's own corpus)."""

from __future__ import annotations

import json
import sys
from importlib.resources import files
from pathlib import Path


def smoke_dataset() -> dict:
    return json.loads(files("citestream").joinpath("data/rag_smoke_dataset.json").read_text(encoding="utf-8"))


def write_pdf(path: Path, title: str, text: str) -> None:
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    doc = SimpleDocTemplate(str(path), pagesize=letter, title=title, invariant=1)
    doc.build([Paragraph(title, styles["Title"]), Paragraph(text, styles["BodyText"])])


def main(out: str) -> None:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for doc in smoke_dataset()["documents"]:
        write_pdf(folder / f"{doc['docId']}.pdf", doc["title"], doc["text"])
    print(f"wrote {len(smoke_dataset()['documents'])} smoke PDFs to {folder}")


if __name__ == "__main__":
    main(sys.argv[1])
