"""Minimal false twins of the dev claim sets' true claims, for a verifier stress run (issue 52).

    python scripts/claim_twins.py --out twins.jsonl
    citestream verify-eval --golden twins.jsonl --no-ingest --verbose

Each supported claim of the dev sets (claims_docs_dev, claims_v2_dev, claims_constructions_dev, claims_corpus)
gets one-edit twins that make it false against its source: a direction or party word swapped ("within" →
"outside", "required" → "optional", "FDA" → "the applicant"), its first modal or copula negated (or a negation
dropped), and its first plain number changed. Every twin is labelled ``contradicted``; the false passes are the
verifier's gaps. Dev sets only: the test splits are reported once per kept change.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter

SETS = ("claims_docs_dev", "claims_v2_dev", "claims_constructions_dev", "claims_corpus")
SWAPS = (("within", "outside"), ("before", "after"), ("after", "before"), ("more than", "less than"),
         ("less than", "more than"), ("at least", "at most"), ("at most", "at least"), ("higher", "lower"),
         ("lower", "higher"), ("increase", "decrease"), ("minimum", "maximum"), ("maximum", "minimum"),
         ("all", "only some"), ("every", "only one"), ("required", "optional"), ("mandatory", "optional"),
         ("always", "never"), ("prior to", "after"), ("earlier", "later"), ("longer", "shorter"),
         ("FDA", "the applicant"), ("the applicant", "FDA"), ("the sponsor", "FDA"), ("the manufacturer", "FDA"),
         ("include", "exclude"), ("permitted", "prohibited"), ("allowed", "prohibited"), ("same", "different"),
         ("sterile", "non-sterile"), ("domestic", "foreign"), ("written", "oral"))
NEGATIONS = ((r"\bmust not\b", "must"), (r"\bshould not\b", "should"), (r"\bis not\b", "is"), (r"\bare not\b", "are"),
             (r"\bdoes not\b", "does"), (r"\bdo not\b", "do"), (r"\bcannot\b", "can"), (r"\bmust\b", "must not"),
             (r"\bshould\b", "should not"), (r"\bis\b", "is not"), (r"\bare\b", "are not"), (r"\bcan\b", "cannot"))
_PLAIN_NUMBER = re.compile(r"(?<![\d.(§])\b(\d{1,4})\b(?![.)]?\d)")


def twins(claim: str) -> list[tuple[str, str]]:
    """(construction, text) of each one-edit twin of ``claim``."""
    made = []
    for old, new in SWAPS:
        pattern = rf"\b{re.escape(old)}\b"
        if re.search(pattern, claim):
            made.append((f"swap {old}", re.sub(pattern, new, claim, count=1)))
    negation = next(((p, r) for p, r in NEGATIONS if re.search(p, claim)), None)
    if negation:
        made.append(("negation", re.sub(negation[0], negation[1], claim, count=1)))
    number = _PLAIN_NUMBER.search(claim)
    if number:
        n = int(number.group(1))
        changed = n + 3 if 1900 <= n <= 2030 else (n * 2 if n > 1 else n + 2)
        made.append(("number", f"{claim[:number.start(1)]}{changed}{claim[number.end(1):]}"))
    return [(kind, text) for kind, text in made if text != claim]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", default="tests/golden")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = []
    for name in SETS:
        with open(f"{args.golden}/{name}.jsonl", encoding="utf-8") as f:
            items = [json.loads(line) for line in f if line.strip()]
        for item in (i for i in items if i["label"] == "supported"):
            for k, (kind, text) in enumerate(twins(item["claim"])):
                out.append({**item, "id": f"{item['id']}-t{k}", "claim": text, "label": "contradicted",
                            "construction": kind, "from": item["claim"]})
    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in out)
    print(f"{len(out)} twins written to {args.out}:", dict(Counter(r["construction"].split()[0] for r in out)))


if __name__ == "__main__":
    main()
