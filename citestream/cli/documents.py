"""``citestream documents``: what is indexed, and an operator's correction of a document's issuer (whoever ingested
or uploaded it), kept in the document's history (``ingest.correct``)."""

from __future__ import annotations

import getpass


def add_parser(sub) -> None:
    p = sub.add_parser("documents", help="list the indexed documents; correct a document's issuer (set-issuer)")
    actions = p.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="every document: id, issuer, scope, title")
    fix = actions.add_parser("set-issuer", help="correct a document's issuer (and so its scope); kept in its history")
    fix.add_argument("doc_id", help="the document's id (`citestream documents list`), e.g. upload:my-sop")
    fix.add_argument("issuer", help="a gazetteer name: FDA, EMA, ICH, SOPS, WHO, MHRA, European Commission, ...")
    fix.add_argument("--authority", choices=["MIXED", "FDA", "EMA", "ICH", "SOPS"],
                     help="the scope (default: the issuer's own, else MIXED)")
    fix.add_argument("--reason", default="", help="why, kept in the document's history")
    history = actions.add_parser("history", help="a document's issuer corrections")
    history.add_argument("doc_id")
    p.set_defaults(fn=cmd_documents)


def cmd_documents(args) -> int:
    from ..ingest.correct import HISTORY_KEY, CannotCorrect, correct_issuer
    from ..core.scrub import for_log
    from ..store import ChunkStore, engine_for

    store = ChunkStore(engine_for())
    if args.action == "list":
        from ..web.queries import list_documents

        for d in list_documents(store.engine):
            print("\t".join(for_log(field) for field in (d.doc_id, d.issuer or "-", d.authority, d.title)))
        return 0
    if args.action == "history":
        labels = store.labels(args.doc_id)
        if labels is None:
            print(f"no document {args.doc_id!r}")
            return 1
        for e in labels[2].get(HISTORY_KEY, []):
            print(f"{e['at']}  {e['by']}: {e['was_issuer'] or '-'} ({e['was_authority']}) -> {e['issuer']} "
                  f"({e['authority']}){'  ' + e['reason'] if e.get('reason') else ''}")
        return 0
    try:
        done = correct_issuer(store, args.doc_id, args.issuer, args.authority, by=_operator(), reason=args.reason)
    except CannotCorrect as exc:
        print(f"not corrected: {exc}")
        return 1
    print(f"{done.doc_id}: issuer {done.was_issuer or '-'} ({done.was_authority}) -> {done.issuer} ({done.authority}); "
          f"recorded in its history at {done.at}")
    return 0


def _operator() -> str:
    try:
        return f"operator {getpass.getuser()}"
    except (KeyError, OSError):
        return "operator"
