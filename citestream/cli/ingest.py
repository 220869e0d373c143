"""``citestream ingest``: ingest PDFs (files or folders) with a progress bar and a summary."""

from __future__ import annotations

import argparse
import sys

from ..config import get_settings


def add_parser(sub) -> None:
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
    from ..core.regulators import canonical

    found = canonical(value)
    if found is None:
        raise argparse.ArgumentTypeError(f"{value!r} is no issuer of citestream.core.regulators")
    return found


def cmd_ingest(args) -> int:
    """Ingest PDFs with a progress bar (documents, pages, chunks) and a summary; ``--dry-run`` changes nothing."""
    from tqdm import tqdm

    from ..ingest import pdf_paths
    from ..ingest.runner import ingest_paths
    from ..store import ChunkStore, engine_for

    store = ChunkStore(engine_for())
    embedder = None
    if not args.dry_run:
        from ..embedding import get_embedder

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
