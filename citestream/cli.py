"""citestream: one entry point for the worker, operations and the clients."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import uuid
from pathlib import Path
from typing import cast

from .config import get_settings


def cmd_infra(args) -> int:
    from . import infra

    settings = get_settings()
    owner = Path(args.owner_file) if args.owner_file else None
    if args.action == "up":
        started = infra.up(settings, owner)
        print(f"postgres on 127.0.0.1:{settings.pg_port}, {settings.broker} broker on 127.0.0.1:{settings.broker_port}"
              f" (started now: {', '.join(started) or 'none'})")
    elif args.action == "down":
        print(f"stopped: {', '.join(infra.down(settings, owner)) or 'nothing'}")
    else:
        print(json.dumps(infra.status(settings)))
    return 0


def cmd_migrate(args) -> int:
    from alembic import command
    from alembic.config import Config

    from .config import PROJECT_ROOT

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    command.upgrade(config, args.revision)
    print(f"database migrated to {args.revision}")
    return 0


def cmd_topics(args) -> int:
    from .topics import create_topics

    settings = get_settings()
    created = create_topics(settings.bootstrap_servers, settings.topic_prefix, override=settings.topic_partitions,
                            retention_hours=settings.topic_retention_hours, **settings.kafka_security())
    kept = f"{settings.topic_retention_hours:g} h" if settings.topic_retention_hours else "forever"
    print(f"topics created: {', '.join(created) or 'none (all exist)'}; records kept {kept}")
    return 0


def cmd_schemas(args) -> int:
    from .topics import REGISTRY

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for spec in REGISTRY.values():
        path = out / f"{spec.name}.schema.json"
        path.write_text(json.dumps(spec.value_model.model_json_schema(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(REGISTRY)} JSON Schemas to {out}")
    return 0


def issuer_line(f) -> str:
    """What ingest decided of a file's issuer, and from what: "issuer WHO (first page: 'World Health Organization'),
    scope MIXED"."""
    issuer = f.issuer or "unknown"
    where = {"given": "the command line", "manifest": "manifest.json", "request": "the request",
             "uploader": "the uploader", "unknown": "nothing names one"}.get(f.authority_source,
                                                                     f.authority_source.replace("-", " "))
    said = f": {f.evidence!r}" if f.evidence else ""
    return f"issuer {issuer} ({where}{said}), scope {f.authority}"


def _issuer_name(value: str) -> str:
    from .core.regulators import canonical

    found = canonical(value)
    if found is None:
        raise argparse.ArgumentTypeError(f"{value!r} is no issuer of citestream.core.regulators")
    return found


def cmd_ingest(args) -> int:
    """Ingest PDFs with a progress bar (documents, pages, chunks) and a summary; ``--dry-run`` changes nothing."""
    from tqdm import tqdm

    from .ingest import pdf_paths
    from .ingest.runner import ingest_paths
    from .store import ChunkStore, engine_for

    store = ChunkStore(engine_for())
    embedder = None
    if not args.dry_run:
        from .embedding import get_embedder

        embedder = get_embedder()
    total = len(list(pdf_paths(args.paths)))
    bar = tqdm(total=total, unit="doc", desc="dry run" if args.dry_run else "ingest", disable=args.quiet,
               file=sys.stderr)
    seen = {"pages": 0, "chunks": 0}

    def on_file(f) -> None:
        seen["pages"] += f.pages
        seen["chunks"] += f.chunks
        bar.set_postfix(pages=seen["pages"], chunks=seen["chunks"], refresh=False)
        bar.update(1)
        detail = f"ERROR {f.error}" if f.error else f"{f.pages} pages, {f.chunks} chunks, {issuer_line(f)}"
        bar.write(f"{f.state:>10}  {f.path.name}: {detail}", file=sys.stdout)
        for warning in f.warnings:
            bar.write(f"{'':>10}  {f.path.name}: {warning}", file=sys.stdout)

    summary = ingest_paths(args.paths, store, embedder, args.authority, dry_run=args.dry_run, on_file=on_file,
                           max_bytes=int(get_settings().ingest_max_pdf_mb * 1024 * 1024), issuer=args.issuer,
                           use_manifest=not args.no_manifest)
    bar.close()
    read = [f for f in summary.files if f.state != "error" and f.authority_source not in ("given", "manifest")]
    if read:
        print(f"{len(read)} issuer(s) read from the documents; to correct one, name it in manifest.json beside the "
              'PDF, e.g. [{"file": "' + read[0].path.name + '", "issuer": "WHO"}] (any name of '
              "citestream.core.regulators), or pass --issuer for every file")
    if args.dry_run:
        print(f"dry run: documents {len(summary.files)} (new {summary.count('new')}, "
              f"changed {summary.count('changed')}, "
              f"unchanged {summary.count('unchanged')}), pages {summary.pages}, chunks {summary.chunks}, "
              f"errors {len(summary.errors)}; nothing written")
    else:
        print(f"documents {summary.count('ingested')}, pages {summary.pages}, chunks {summary.chunks}, "
              f"skipped {summary.count('unchanged')}, errors {len(summary.errors)}, seconds {summary.seconds:.1f}, "
              f"index {summary.index_version}")
    return 1 if summary.errors else 0


def cmd_ask(args) -> int:
    from .ops.client import ReplyReader, ask_many
    from .models import QuestionEvent, ValidatedAnswer

    questions = [QuestionEvent(request_id=f"ask-{uuid.uuid4().hex[:12]}", question=q, scope=args.scope)
                 for q in args.question]
    reader = ReplyReader(get_settings(), "answers")  # only answers a worker sealed are printed
    replies, latency = ask_many(questions, timeout_s=args.timeout, reader=reader)
    if reader.refused:
        print(f"({reader.refused} records on answers for these requests were not written by a worker: ignored)\n")
    answers = cast("dict[str, ValidatedAnswer]", replies)  # the `answers` topic's value model
    missing = 0
    for q in questions:
        print(f"Q: {q.question}")
        answer = answers.get(q.request_id)
        if answer is None:
            missing += 1
            print(f"(no answer within {args.timeout:.0f}s for request_id {q.request_id}; is a worker running?)\n")
            continue
        print(answer.answer_text)
        print(f"[{answer.classification}, {latency[q.request_id]:.2f}s, request_id {q.request_id}]\n")
    return 2 if missing else 0


def cmd_worker(args) -> int:
    import faust

    from . import metrics
    from .ops import reconcile
    from .deps import get_deps
    from .streams.agents import app
    from .streams.startup import wait_for_servers

    import os

    from .ingest.expiry import keep_uploads_expiring
    from .store.anchors import keep_anchored

    os.umask(0o077)  # anything the worker writes (checkpoints, keys) is the owner's only
    logging.basicConfig(level=args.loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = get_settings()
    wait_for_servers(settings, logging.getLogger("citestream.worker"))
    metrics.serve(settings.metrics_port, settings.metrics_host)
    get_deps().warm()
    groups = [settings.app_id]
    if settings.reconcile_after_s > 0:
        app.task(reconcile.supervised)
        groups.append(f"{settings.app_id}-reconciler")
    import threading

    threading.Thread(target=reconcile.stuck_group_watchdog, args=(settings, groups), daemon=True,
                     name="group-watchdog").start()
    threading.Thread(target=keep_anchored, args=(settings,), daemon=True, name="ledger-anchor").start()
    threading.Thread(target=keep_uploads_expiring, args=(settings,), daemon=True, name="uploads-expiry").start()
    worker = faust.Worker(app, loglevel=args.loglevel, quiet=True)
    worker.execute_from_commandline()
    return 0


def cmd_web(args) -> int:
    """The web page (citestream/web): a Kafka client serving browsers; see docs/web.md."""
    import uvicorn

    from .web import create_app
    from .web.settings import get_web_settings

    import os

    os.umask(0o077)  # uploaded PDFs and the page cache: the owner's only
    web = get_web_settings()
    if args.host or args.port:
        web = web.model_copy(update={k: v for k, v in (("host", args.host), ("port", args.port)) if v})
    logging.basicConfig(level=args.loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.WARNING)  # a line per partition on every group join
    print(f"citestream web on {web.url}", flush=True)
    # X-Forwarded-For only from the proxies the operator names: uvicorn believes 127.0.0.1's by default, and every
    # visitor of a page on 127.0.0.1 would pick the address its budgets are counted under
    trusted = web.trusted_proxies.strip()
    uvicorn.run(create_app(web=web), host=web.host, port=web.port, log_level=args.loglevel,
                timeout_graceful_shutdown=3, access_log=False, proxy_headers=bool(trusted),
                forwarded_allow_ips=trusted or None)
    return 0


def cmd_reconcile(args) -> int:
    import asyncio

    from .ops import reconcile

    logging.basicConfig(level=args.loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = get_settings()
    if args.after is not None:
        settings = settings.model_copy(update={"reconcile_after_s": args.after})
    rec = asyncio.run(reconcile.run(settings, once_idle_s=args.once_idle))
    print(f"reconciled: re-driven {rec.redriven}, answered as failed {rec.failed}, still open {len(rec.open)}")
    return 0


def cmd_ledger(args) -> int:
    """`verify`: recompute the hash chain and hold it against the signed checkpoints. `anchor`: sign the head now.
    `replay ID`: rebuild each prompt of a request, compare SHA-256."""
    from .ops.replay import replay
    from .store import Ledger, engine_for
    from .store.anchors import anchor_file, covers, ledger_name, write_checkpoint

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


def cmd_eval(args) -> int:
    from .eval.main import cmd_eval as run_eval

    return run_eval(args)


def cmd_verify_eval(args) -> int:
    from .eval.claims import run_eval

    report = run_eval(args.golden, None if args.no_ingest else args.corpus, k=args.top_k, judge=args.judge)
    if args.verbose:
        for r in report["results"]:
            print(f"{'ok ' if r['correct'] else 'BAD'} {r['id']} {r['label']:<12} {r['verdict']:<8} {r['evidence']} "
                  f"{r['rationale']}")
    print(json.dumps({k: v for k, v in report.items() if k != "results"}))
    return 0 if report["accuracy"] >= args.min_accuracy else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citestream", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("infra", help="start/stop the embedded Postgres and broker")
    p.add_argument("action", choices=["up", "down", "status"])
    p.add_argument("--owner-file", help="record what this call started / stop only that")
    p.set_defaults(fn=cmd_infra)

    p = sub.add_parser("migrate", help="apply Alembic migrations")
    p.add_argument("revision", nargs="?", default="head")
    p.set_defaults(fn=cmd_migrate)

    p = sub.add_parser("topics", help="create every registered topic")
    p.add_argument("action", choices=["create"])
    p.set_defaults(fn=cmd_topics)

    p = sub.add_parser("schemas", help="write the JSON Schema of every topic's record")
    p.add_argument("--out", default="schemas")
    p.set_defaults(fn=cmd_schemas)

    p = sub.add_parser("ingest", help="ingest PDFs (files or folders)")
    p.add_argument("paths", nargs="+")
    p.add_argument("--authority", choices=["FDA", "EMA", "ICH", "SOPS", "MIXED"],
                   help="scope of every file (default: manifest.json beside the PDFs, then the issuer read from each)")
    p.add_argument("--issuer", type=_issuer_name, metavar="NAME",
                   help="issuer of every file, a name of the gazetteer (FDA, EMA, 'European Commission', ICH, MHRA, "
                        "WHO, PIC/S, 'Health Canada', TGA, PMDA, Swissmedic, ...); its scope follows")
    p.add_argument("--no-manifest", action="store_true",
                   help="ignore manifest.json: read every issuer from the documents (their first pages, metadata, "
                        "file names)")
    p.add_argument("--dry-run", action="store_true", help="parse and plan; print what would change, write nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_ingest)

    p = sub.add_parser("ask", help="publish questions and print their validated answers")
    p.add_argument("question", nargs="+")
    p.add_argument("--scope", default="MIXED", choices=["MIXED", "FDA", "EMA", "ICH", "SOPS"])
    p.add_argument("--timeout", type=float, default=60.0)
    p.set_defaults(fn=cmd_ask)

    p = sub.add_parser("worker", help="run the stream agents")
    p.add_argument("--loglevel", default="info")
    p.set_defaults(fn=cmd_worker)

    p = sub.add_parser("web", help="serve the web page (ask, live flow, citations, documents)")
    p.add_argument("--host", help="listen address (default CITESTREAM_UI_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default CITESTREAM_UI_PORT, 8088)")
    p.add_argument("--loglevel", default="info")
    p.set_defaults(fn=cmd_web)

    p = sub.add_parser("reconcile", help="re-drive questions that have no outcome (also runs inside the worker)")
    p.add_argument("--after", type=float, help="seconds without progress before a re-drive (default from settings)")
    p.add_argument("--once-idle", type=float, help="exit when nothing is open and no question came for this long")
    p.add_argument("--loglevel", default="info")
    p.set_defaults(fn=cmd_reconcile)

    p = sub.add_parser("eval", help="score golden sets through the pipeline and apply the qa-contract-v1 gates")
    p.add_argument("--set", action="append", help="a golden set JSONL (repeatable; default: both golden sets)")
    p.add_argument("--through", choices=["kafka", "inprocess"], default="kafka")
    p.add_argument("--out", default="eval-out", help="folder for the JSON report and the PNG plots")
    p.add_argument("--timeout", type=float, help="seconds to wait for all answers of a set (kafka)")
    p.add_argument("--no-gates", action="store_true", help="report only; exit 0 whatever the gates say")
    p.add_argument("--compare", nargs=2, metavar=("OLD.json", "NEW.json"), help="print metric deltas and stop")
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser("ledger", help="audit ledger: verify the chain and its signed checkpoints, anchor, replay")
    p.add_argument("action", choices=["verify", "anchor", "replay"])
    p.add_argument("request_id", nargs="?", help="for replay: the request whose prompts to rebuild")
    p.add_argument("--allow-missing-anchors", action="store_true",
                   help="for verify: a missing signing key or checkpoint file is not a failure (the chain alone)")
    p.set_defaults(fn=cmd_ledger)

    from .training.make import add_parser as add_model_parser

    add_model_parser(sub)

    p = sub.add_parser("verify-eval", help="score the claim verifier on a golden claims set over the corpus")
    p.add_argument("--golden", default="tests/golden/claims_corpus.jsonl")
    p.add_argument("--corpus", default="../shared/corpus", help="where the golden set's PDFs are (ingested first)")
    p.add_argument("--no-ingest", action="store_true", help="score against what is already ingested")
    p.add_argument("--top-k", type=int, default=8)
    p.add_argument("--judge", choices=["relevance", "rules", "llm"], default="relevance")
    p.add_argument("--min-accuracy", type=float, default=0.0, help="exit 1 below this accuracy")
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(fn=cmd_verify_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .core.errors import CannotStart
    from .core.scrub import log_one_line_per_record

    log_one_line_per_record()  # record text in a log line never starts another (docs/security.md, point 11)
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except CannotStart as exc:  # the user can fix it: one line, no traceback
        print(f"citestream: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
