"""``citestream schemas``: write the JSON Schema of every topic's record."""

from __future__ import annotations

import json
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("schemas", help="write the JSON Schema of every topic's record")
    p.add_argument("--out", default="schemas")
    p.set_defaults(fn=cmd_schemas)


def cmd_schemas(args) -> int:
    from ..topics import REGISTRY

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for spec in REGISTRY.values():
        path = out / f"{spec.name}.schema.json"
        path.write_text(json.dumps(spec.value_model.model_json_schema(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(REGISTRY)} JSON Schemas to {out}")
    return 0
