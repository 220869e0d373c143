"""Screenshots of a running page over the real corpus, for the README (docs/screenshots/corpus-*.png).

    DEMO_KEEP=1 DEMO_CORPUS=../shared/corpus make demo      # in one terminal
    .venv/bin/python scripts/screenshots.py http://127.0.0.1:8088 docs/screenshots

Asks the questions below through the page as a person would (typing, Enter), waits for the answer, opens
its first citation and saves both views. The other views' screenshots come from the browser tests
(CITESTREAM_SCREENSHOTS=docs/screenshots .venv/bin/python -m pytest -m browser).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.browser import chromium

QUESTIONS = [  # newest answer first on the page: the last question's first citation is the one opened
    ("What is the boiling point of liquid nitrogen?", "MIXED"),
    ("Does CPG Sec. 490.100 apply to biological products?", "MIXED"),
    ("What does 21 CFR Part 11 require for electronic signatures?", "FDA"),
]


def main(base: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with chromium() as context:
        page = context.new_page()
        page.goto(base.rstrip("/") + "/")
        for question, scope in QUESTIONS:
            page.select_option("#scope", scope)
            page.fill("#question", question)
            page.press("#question", "Enter")
            page.locator(f"#answers .card:has(.question:text-is('{question}')) .tags").wait_for(timeout=120_000)
        page.screenshot(path=str(out / "corpus-ask.png"), full_page=True)
        page.locator("#answers .cite-link").first.click()
        page.locator("#page-figure").wait_for(state="visible", timeout=60_000)
        while not page.evaluate("document.getElementById('page-image').naturalWidth > 0"):
            time.sleep(0.2)
        page.screenshot(path=str(out / "corpus-citation.png"), full_page=True)
    print(f"wrote {out / 'corpus-ask.png'} and {out / 'corpus-citation.png'}")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2] if len(sys.argv) > 2 else "docs/screenshots"))
