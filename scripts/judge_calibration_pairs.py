"""Write the pairs the judge's static int8 graph is calibrated on (``citestream/data/judge_calibration.json``).

Why a file: static int8 fixes every activation's scale once, from these pairs, so a pair scores the same alone or in
any batch (``relevance/onnx_runtime.py``). They come from the written supervision's dev documents only (never a
test document): each dev question with an answering and a related unit, each dev claim with its unit ("claim: "),
chosen by a fixed seed. ``python scripts/judge_calibration_pairs.py`` rewrites the same file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WRITTEN = ROOT / "training-data" / "written"
OUT = ROOT / "citestream" / "data" / "judge_calibration.json"
QUESTIONS, CLAIMS = 120, 40


def main() -> None:
    split = json.loads((WRITTEN / "split.json").read_text())["documents"]
    dev = set(split["dev"])
    rows = [json.loads(line) for line in (WRITTEN / "questions.jsonl").read_text().splitlines() if line.strip()]
    claims = [json.loads(line) for line in (WRITTEN / "claims.jsonl").read_text().splitlines() if line.strip()]
    questions = [(q["question"], text) for q in rows if q["doc"] in dev
                 for text in (q.get("answer_texts") or [])[:1] + (q.get("related_texts") or [])[:1]]
    stated = [("claim: " + c["claim"], c["unit_text"]) for c in claims if c["doc"] in dev]
    rng = random.Random(53)
    pairs = rng.sample(questions, min(QUESTIONS, len(questions))) + rng.sample(stated, min(CLAIMS, len(stated)))
    OUT.write_text(json.dumps({"about": __doc__.strip().splitlines()[0], "source": "training-data/written (dev)",
                               "pairs": [list(p) for p in pairs]}, indent=0) + "\n")
    print(f"{len(pairs)} pairs -> {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
