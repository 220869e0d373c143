"""Split an evaluation set once, at random with a fixed seed, into a dev half (tune on it) and a test half
(report only).

    .venv/bin/python scripts/split_eval_set.py FULL.jsonl --name qa_v2 --out tests/golden
    .venv/bin/python scripts/split_eval_set.py tests/golden/qa_v2_dev.jsonl tests/golden/qa_v2_test.jsonl \
        --name qa_v2 --out /tmp/resplit          # reproduces both files byte for byte

Items are grouped into families (an item plus every item whose ``source_id`` leads back to it), so a
question and its rewordings always land in the same half. Families are stratified — by ``answerable``
for question sets, by ``label`` for claim sets — and within each stratum they are sorted by id, shuffled
with ``random.Random(SEED)`` and cut after the prefix whose item count is closest to half of the
stratum: the prefix is dev, the rest test. The split depends only on the set of items, never on the
order or the files they are read from, so splitting dev + test again gives the same two files.
Output files hold the input lines unchanged, in id order. Prints counts only.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

SEED = 20261123


def read_items(paths: list[Path]) -> dict[str, tuple[dict, str]]:
    """id -> (item, raw line); the same id may appear twice only with identical content."""
    items: dict[str, tuple[dict, str]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            previous = items.get(item["id"])
            if previous is not None and previous[0] != item:
                raise SystemExit(f"{path}: id {item['id']} occurs twice with different content")
            items[item["id"]] = (item, line)
    return items


def families(items: dict[str, dict]) -> list[list[str]]:
    """Groups of ids: each root with every item whose source_id chain leads to it."""
    def root(item_id: str) -> str:
        seen = set()
        while items[item_id].get("source_id") and items[item_id]["source_id"] in items:
            if item_id in seen:
                raise SystemExit(f"source_id cycle at {item_id}")
            seen.add(item_id)
            item_id = items[item_id]["source_id"]
        return item_id

    groups: dict[str, list[str]] = defaultdict(list)
    for item_id in items:
        groups[root(item_id)].append(item_id)
    return [sorted(ids) for _, ids in sorted(groups.items())]


def stratum(item: dict) -> str:
    if "label" in item:
        return f"label={item['label']}"
    return "answerable" if item["answerable"] else "unanswerable"


def split(items: dict[str, dict]) -> tuple[set[str], set[str]]:
    strata: dict[str, list[list[str]]] = defaultdict(list)
    for family in families(items):
        strata[stratum(items[family[0]])].append(family)
    dev: set[str] = set()
    test: set[str] = set()
    for name in sorted(strata):
        fams = sorted(strata[name], key=lambda fam: fam[0])
        random.Random(SEED).shuffle(fams)
        total = sum(len(fam) for fam in fams)
        prefix, best_k, best_gap = 0, 0, total / 2
        for k, fam in enumerate(fams, 1):
            prefix += len(fam)
            if abs(prefix - total / 2) < best_gap:
                best_k, best_gap = k, abs(prefix - total / 2)
        for k, fam in enumerate(fams):
            (dev if k < best_k else test).update(fam)
    return dev, test


def id_key(item_id: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", item_id))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", type=Path, help="JSONL files (the full set, or dev + test)")
    parser.add_argument("--name", help="output name stem (default: first input without _full/_dev/_test)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    args = parser.parse_args()
    name = args.name or re.sub(r"_(full|dev|test)$", "", args.inputs[0].stem)

    raw = read_items(args.inputs)
    items = {item_id: item for item_id, (item, _) in raw.items()}
    dev, test = split(items)
    args.out.mkdir(parents=True, exist_ok=True)
    for part, ids in (("dev", dev), ("test", test)):
        lines = [raw[item_id][1] for item_id in sorted(ids, key=id_key)]
        (args.out / f"{name}_{part}.jsonl").write_text("\n".join(lines) + "\n")
        counts = Counter(stratum(items[item_id]) for item_id in ids)
        print(f"{name}_{part}: {len(ids)} items (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")")


if __name__ == "__main__":
    main()
