"""``citestream ledger``: the audit ledger: verify the chain and its signed checkpoints, anchor, replay."""

from __future__ import annotations

import sys

from ..config import get_settings


def add_parser(sub) -> None:
    p = sub.add_parser("ledger", help="audit ledger: verify the chain and its signed checkpoints, anchor, replay")
    p.add_argument("action", choices=["verify", "anchor", "replay"])
    p.add_argument("request_id", nargs="?", help="for replay: the request whose prompts to rebuild")
    p.add_argument("--allow-missing-anchors", action="store_true",
                   help="for verify: a missing signing key or checkpoint file is not a failure (the chain alone)")
    p.set_defaults(fn=cmd_ledger)


def cmd_ledger(args) -> int:
    """`verify`: recompute the hash chain and hold it against the signed checkpoints. `anchor`: sign the head now.
    `replay ID`: rebuild each prompt of a request, compare SHA-256."""
    from ..ops.replay import replay
    from ..store import Ledger, engine_for
    from ..store.anchors import anchor_file, covers, ledger_name, write_checkpoint

    settings = get_settings()
    ledger, name = Ledger(engine_for()), ledger_name(settings.database_url)
    try:
        anchors = anchor_file(settings, create_key=args.action == "anchor") if args.action != "replay" else None
    except ValueError as exc:  # the key file is not hex, or others may read it
        print(f"ledger NOT VERIFIED: the signing key {settings.ledger_key_path} is refused: {exc}")
        return 1
    if args.action == "anchor":
        checkpoint = write_checkpoint(ledger, anchors, name)
        if checkpoint is None:
            print("ledger empty: nothing to anchor")
        else:
            print(f"checkpoint: row {checkpoint.row_id}, {checkpoint.count} rows, head {checkpoint.head_hash[:16]}…"
                  f" signed into {settings.ledger_anchor_path}")
        return 0
    if args.action == "verify":
        missing = [f"{what} {path}" for what, path, there in (
            ("the signing key", settings.ledger_key_path, anchors is not None),
            ("the checkpoint file", settings.ledger_anchor_path, settings.ledger_anchor_path.exists())) if not there]
        if missing and not args.allow_missing_anchors:
            print(f"ledger NOT VERIFIED: {' and '.join(missing)} missing; without them a rewritten or truncated "
                  "ledger looks intact. Restore them, or pass --allow-missing-anchors to check the chain alone")
            return 1
        checkpoints, forged = anchors.read(name) if anchors else ([], 0)
        report = ledger.verify(checkpoints)
        if not report.ok:
            print(f"ledger BROKEN at row id {report.first_broken_id}: {report.reason}")
            return 1
        anchored = (f"; matches {report.checkpoints} signed checkpoints up to row {report.anchored_row}"
                    if report.checkpoints else "; no signed checkpoint to check against yet (`citestream ledger "
                    "anchor`, or a running worker, writes them)")
        grace_s = max(2 * settings.ledger_anchor_interval_s, 60) + 60
        late, first = ledger.unanchored(covers(checkpoints), grace_s)
        if late and not args.allow_missing_anchors:
            print(f"ledger NOT VERIFIED: {late} rows from row {first} on were written more than {grace_s:.0f} s ago "
                  "and no signed checkpoint covers them: the checkpoint file was emptied or cut short, or no worker "
                  "anchors this ledger (`citestream ledger anchor` signs the head as it is now)")
            return 1
        print(f"ledger ok: {report.rows} rows, chain intact{anchored}")
        if forged:
            print(f"checkpoint file BROKEN: {forged} lines of {settings.ledger_anchor_path} fail their signature or "
                  "their link to the checkpoint before (edited, removed or moved)")
            return 1
        return 0
    if not args.request_id:
        print("ledger replay needs a REQUEST_ID", file=sys.stderr)
        return 2
    results = replay(ledger, args.request_id)
    if not results:
        print(f"no ledger rows for request_id {args.request_id}")
        return 2
    for r in results:
        state = "MATCH" if r.ok else "MISMATCH"
        print(f"row {r.row_id} stage={r.stage} model={r.model} stored={r.stored_sha256} "
              f"rebuilt={r.rebuilt_sha256 or '-'} {state}" + (f": {r.reason}" if r.reason else ""))
    return 0 if all(r.ok for r in results) else 1
