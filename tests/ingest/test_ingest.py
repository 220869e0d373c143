"""Ingestion against the real Postgres: the envelope of rag-loop-acceptance §1.1 and the failure modes of §4."""

import re
import uuid

import psycopg
import pytest
from sqlalchemy import text

from citestream.ingest import ingest_request
from citestream.ingest.runner import ingest_paths
from citestream.models import IngestRequest
from citestream.store import ChunkSearch, ChunkStore

from tests.support.common import new_request_id
from tests.support.ingest import (
    FailingEmbedder, PageSpec, prose, write_blank_pdf, write_corrupt_pdf, write_encrypted_pdf, write_guidance_pdf,
    write_image_only_pdf, write_zero_byte_pdf,
)

CHUNK_ID = re.compile(r"^(?P<doc>.+)-chunk-\d+$")


@pytest.fixture()
def store(engine) -> ChunkStore:
    return ChunkStore(engine)


def _request(**kw) -> IngestRequest:
    return IngestRequest(request_id=new_request_id("ing"), **kw)


def _doc(doc_id: str, body: str) -> dict:
    return {"docId": doc_id, "title": f"Title of {doc_id}", "source": "test", "text": body,
            "metadata": {"topic": "test"}}


def _unique(stem: str) -> str:
    """A file stem (so a docId) of this run's own: the session database outlives test sessions."""
    return f"{stem}_{uuid.uuid4().hex[:8]}"


def _rows(engine, doc_id: str) -> list[dict]:
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(
            text("SELECT chunk_id, kind, parent_id, page, section, authority, pdf, text FROM chunks "
                 "WHERE doc_id = :d ORDER BY seq"), {"d": doc_id})]


def test_inline_documents_envelope(store, embedder):
    docs = [_doc(f"env-{i}", f"Clause {i}: retained records must stay legible for {i + 2} years.") for i in range(3)]
    request = _request(documents=docs, policy_version="qa-v1")
    result = ingest_request(request, store, embedder)
    out = result.outputs
    assert result.status == "ok" and result.request_id == request.request_id and result.error is None
    assert out.ingestedCount == 3 and out.chunkCount >= out.ingestedCount
    assert set(out.docIds) == {d["docId"] for d in docs}
    assert all(CHUNK_ID.match(c) for c in out.chunkIds)
    assert out.collection and out.errors == []
    assert result.index_version == store.index_version()
    rows = _rows(store.engine, "env-0")
    child = next(r for r in rows if r["kind"] == "child")
    assert child["parent_id"] in {r["chunk_id"] for r in rows if r["kind"] == "parent"}
    assert (child["page"], child["section"], child["pdf"]) == (1, "Title of env-0", "env-0")


def test_failure_empty_document_list_is_an_ok_no_op(store, embedder):
    before = (store.count_chunks(), store.index_version())
    result = ingest_request(_request(documents=[]), store, embedder)
    assert result.status == "ok"
    assert (result.outputs.ingestedCount, result.outputs.chunkCount, result.outputs.errors) == (0, 0, [])
    assert (store.count_chunks(), store.index_version()) == before


def test_failure_reingest_same_doc_id_upserts_without_growth(store, embedder):
    docs = [_doc("upsert-1", "Batch records are reviewed by the quality unit before release.")]
    first = ingest_request(_request(documents=docs), store, embedder)
    count = store.count_chunks()
    version = store.index_version()
    second = ingest_request(_request(documents=docs), store, embedder)
    assert second.outputs.ingestedCount == 1 and second.outputs.chunkIds == first.outputs.chunkIds
    assert store.count_chunks() == count
    assert store.index_version() == version  # unchanged content: the index did not change


def test_a_document_stored_with_another_relevance_embedder_is_built_again(store, embedder, monkeypatch):
    """Its sentence vectors were another model's: the relevance blend would embed every sentence per question."""
    from citestream.ingest import pipeline

    docs = [_doc(_unique("embedder"), "Batch records are reviewed by the quality unit before release.")]
    ingest_request(_request(documents=docs), store, embedder)
    version = store.index_version()
    monkeypatch.setattr(pipeline, "relevance_embedder_name", lambda: "another-embedder@000000000000")
    assert pipeline.pipeline_version() == f"{pipeline.PIPELINE_VERSION}/another-embedder@000000000000"
    ingest_request(_request(documents=docs), store, embedder)
    assert store.index_version() != version  # rebuilt, not skipped as unchanged


def test_failure_bad_pdfs_are_reported_while_the_others_are_ingested(tmp_path, store, embedder):
    good = write_guidance_pdf(tmp_path / "good_guidance.pdf", [PageSpec("I. SCOPE", prose("calibration", 12))])
    bad = {
        "corrupt": write_corrupt_pdf(tmp_path / "corrupt.pdf", good),
        "encrypted": write_encrypted_pdf(tmp_path / "encrypted.pdf"),
        "empty file": write_zero_byte_pdf(tmp_path / "zero.pdf"),
        "no extractable text": write_blank_pdf(tmp_path / "blank.pdf"),
        "image-only": write_image_only_pdf(tmp_path / "scanned.pdf"),
    }
    missing = tmp_path / "missing.pdf"
    paths = [str(good), *map(str, bad.values()), str(missing)]
    result = ingest_request(_request(paths=paths, authority="FDA"), store, embedder, roots=[tmp_path])
    assert result.status == "ok"
    assert result.outputs.docIds == ["good_guidance"] and result.outputs.ingestedCount == 1
    reasons = {e.path: e.reason for e in result.outputs.errors}
    assert set(reasons) == {*map(str, bad.values()), str(missing)}
    for word, path in bad.items():
        assert word in reasons[str(path)], reasons[str(path)]
    assert "No such file" in reasons[str(missing)]
    for path in bad.values():
        assert _rows(store.engine, path.stem) == []


def test_failure_embedding_failure_writes_nothing(store, embedder):
    ingest_request(_request(documents=[_doc("embed-fail", "Version one text about dissolution testing.")]),
                   store, embedder)
    before_rows, before_version = _rows(store.engine, "embed-fail"), store.index_version()
    changed = [_doc("embed-fail", "Version two text about sterility assurance."), _doc("embed-later", "Never.")]
    result = ingest_request(_request(documents=changed), store, FailingEmbedder())
    assert result.status == "error" and result.error.code == "TASK_FAILED"
    assert "invalid API key" in result.error.message
    assert result.outputs.ingestedCount == 0 and result.outputs.errors[0].docId == "embed-fail"
    assert _rows(store.engine, "embed-fail") == before_rows  # the old version, whole
    assert _rows(store.engine, "embed-later") == []
    assert store.index_version() == before_version


def test_failure_changed_file_replaces_its_old_chunks(tmp_path, store, embedder, engine):
    path = tmp_path / "Changing_Guidance.pdf"
    write_guidance_pdf(path, [PageSpec("I. OLD", prose("zeppelin mooring", 30)),
                              PageSpec("II. MORE", prose("zeppelin hangar", 30))])
    old = ingest_paths([path], store, embedder, authority="FDA")
    old_ids = set(store.chunk_ids("Changing_Guidance"))
    assert old.count("ingested") == 1 and old_ids
    version = store.index_version()

    with engine.connect() as conn:  # the planner's row count follows an ingest that wrote chunks
        assert conn.execute(text("SELECT reltuples FROM pg_class WHERE relname = 'chunks'")).scalar_one() == \
            conn.execute(text("SELECT count(*) FROM chunks")).scalar_one()

    write_guidance_pdf(path, [PageSpec("I. NEW", prose("submarine ballast", 8))])
    new = ingest_paths([path], store, embedder, authority="FDA")
    assert new.count("ingested") == 1
    rows = _rows(engine, "Changing_Guidance")
    assert rows and not any("zeppelin" in r["text"] for r in rows)
    assert len(rows) < len(old_ids)
    assert store.index_version() != version
    with engine.connect() as conn:
        stale = conn.execute(text("SELECT count(*) FROM chunks WHERE text ILIKE '%zeppelin%'")).scalar_one()
    assert stale == 0
    search = ChunkSearch(engine)
    dense = search.dense_search(embedder.embed_one("zeppelin mooring"), "MIXED", 50)
    lexical = search.lexical("zeppelin mooring hangar", "MIXED", 50)
    assert not any("zeppelin" in h.text for h in dense)
    assert not {r.chunk_id for r in lexical} & (old_ids - {r["chunk_id"] for r in rows})
    assert not any(r.chunk_id.startswith("Changing_Guidance") for r in lexical)


def test_dry_run_reports_without_writing(tmp_path, store, embedder):
    path = write_guidance_pdf(tmp_path / f"{_unique('Dry_Run_Guidance')}.pdf",
                              [PageSpec("I. SCOPE", prose("labeling", 10))])
    before = store.count_chunks()
    plan = ingest_paths([path], store, None, authority="FDA", dry_run=True)
    assert plan.files[0].state == "new" and plan.files[0].chunks >= 1
    assert store.count_chunks() == before
    ingest_paths([path], store, embedder, authority="FDA")
    again = ingest_paths([path], store, None, authority="FDA", dry_run=True)
    assert again.files[0].state == "unchanged"


def test_cli_prints_progress_and_summary(tmp_path, settings, store, capsys):
    from citestream.cli import main

    good = write_guidance_pdf(tmp_path / f"{_unique('Cli_Guidance')}.pdf",
                              [PageSpec("I. SCOPE", prose("packaging", 10))])
    write_corrupt_pdf(tmp_path / "broken.pdf")
    assert main(["ingest", str(tmp_path), "--authority", "FDA"]) == 1  # one error → non-zero exit
    out = capsys.readouterr()
    assert good.name in out.out and "broken.pdf: ERROR" in out.out
    assert re.search(r"documents 1, pages 1, chunks \d+, skipped 0, errors 1, seconds [\d.]+", out.out)
    assert "chunks=" in out.err and "pages=" in out.err  # the progress bar
    main(["ingest", str(good), "--dry-run"])
    assert "unchanged" in capsys.readouterr().out


class _FailingSecondWrite(ChunkStore):
    """A store whose second transaction fails like a database outage."""

    def __init__(self, engine):
        super().__init__(engine)
        self.writes = 0

    def replace_document(self, doc, rows):
        self.writes += 1
        if self.writes == 2:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        super().replace_document(doc, rows)


def test_overlapped_writes_keep_order_and_propagate_a_database_failure(tmp_path, engine, embedder):
    stem = _unique("Overlap")
    paths = [write_guidance_pdf(tmp_path / f"{stem}_{n}.pdf", [PageSpec("I. SCOPE", prose(topic, 10))])
             for n, topic in enumerate(["sterility", "labeling", "stability"])]
    seen = []
    summary = ingest_paths(paths, ChunkStore(engine), embedder, authority="FDA", on_file=seen.append)
    assert [f.path for f in summary.files] == [f.path for f in seen] == paths  # reported in input order
    assert [f.state for f in summary.files] == ["ingested"] * 3

    for path, topic in zip(paths, ["aseptic", "carton", "shelf-life"]):
        write_guidance_pdf(path, [PageSpec("I. SCOPE", prose(topic, 10))])
    failing = _FailingSecondWrite(engine)
    with pytest.raises(psycopg.OperationalError):
        ingest_paths(paths, failing, embedder, authority="FDA")
    first, second = _rows(engine, f"{stem}_0"), _rows(engine, f"{stem}_1")
    assert first and all("aseptic" in r["text"] for r in first if r["kind"] == "child")  # written whole
    assert second and all("labeling" in r["text"] for r in second if r["kind"] == "child")  # old version, whole



def test_two_writers_of_one_document_take_turns(store, embedder):
    """Seen when two ingest runs overlapped: the second INSERT failed on the documents key. Now the second waits
    for the first and replaces it; readers find one whole version."""
    import threading

    from citestream.ingest.pipeline import build_chunks, from_text
    from citestream.store import DocumentRow

    doc_id = _unique("concurrent")
    versions = []
    for v in range(2):
        doc = from_text(doc_id, f"Version {v}: stability samples are pulled at {v + 3} months. " * 40)
        versions.append((DocumentRow(doc_id=doc_id, pdf=doc.pdf, content_sha256=doc.content_sha256, pages=1,
                                     authority="MIXED", title="", source="", metadata={}),
                         build_chunks(doc, embedder)))
    for _ in range(3):  # both transactions open at once, three times over
        barrier, errors = threading.Barrier(2), []

        def write(version):
            barrier.wait()  # noqa: B023 - the threads are joined in this iteration
            try:
                store.replace_document(*version)
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)  # noqa: B023

        threads = [threading.Thread(target=write, args=(v,)) for v in versions]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert errors == []
        rows = _rows(store.engine, doc_id)
        assert len({r["text"].split(":")[0] for r in rows if r["kind"] == "child"}) == 1  # one version, whole


def test_a_sentence_vector_that_is_not_finite_fails_the_document_before_any_write(embedder):
    """The sentence units' vectors are checked like the chunks': a backend returning NaN writes nothing."""
    import numpy as np

    from citestream.ingest import from_text
    from citestream.ingest.pipeline import EmbeddingFailed, build_chunks

    class NanEmbedder:
        name, dim = embedder.name, embedder.dim

        def embed(self, texts):
            return np.full_like(embedder.embed(texts), np.nan)

    doc = from_text("nan-units", "Each batch record is kept for at least one year after the expiry date of the batch.",
                    title="nan-units")
    with pytest.raises(EmbeddingFailed, match="non-finite"):
        build_chunks(doc, embedder, sentence_embedder=NanEmbedder())


# --- every document has an owner, its origin (issue 41) -------------------------------------------------------------

@pytest.fixture()
def uploads(settings):
    """A folder of this test's own inside the web page's uploads root, removed afterwards."""
    import shutil

    folder = settings.uploads_dir / uuid.uuid4().hex[:16]
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _document(engine, doc_id: str) -> dict | None:
    with engine.connect() as conn:
        row = conn.execute(text("SELECT authority, origin, content_sha256 FROM documents WHERE doc_id = :d"),
                           {"d": doc_id}).mappings().first()
    return dict(row) if row else None


def test_uploads_and_inline_documents_never_replace_a_document_of_another_root(tmp_path, settings, store, embedder,
                                                                            uploads):
    name = _unique("Shared_Name")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "manifest.json").write_text(f'[{{"file": "{name}.pdf", "authority": "FDA"}}]')
    real = write_guidance_pdf(corpus / f"{name}.pdf", [PageSpec("I. SCOPE", prose("sterile filtration", 14)),
                                                       PageSpec("II. MORE", prose("filter integrity", 14))])
    roots = [corpus, tmp_path / "elsewhere", settings.uploads_dir]
    first = ingest_request(_request(paths=[str(real)], authority="EMA"), store, embedder, roots=roots)
    assert first.outputs.documents[0].model_dump(include={"docId", "authority", "authoritySource", "origin"}) == {
        "docId": name, "authority": "FDA", "authoritySource": "manifest", "origin": "root:corpus"}  # the operator's
    before = (_rows(store.engine, name), _document(store.engine, name))

    # the page's upload under the corpus document's file name, claiming FDA in its text and in the record
    impostor = write_guidance_pdf(uploads / f"{name}.pdf", [PageSpec(
        "Food and Drug Administration", ["Filters need no integrity test at all."])])
    upload = ingest_request(_request(paths=[str(impostor)], authority="FDA"), store, embedder, roots=roots)
    assert upload.outputs.errors == [] and upload.outputs.docIds == [f"upload:{name}"]
    assert upload.outputs.documents[0].model_dump(include={"authority", "issuer", "authoritySource", "origin"}) == {
        "authority": "MIXED", "issuer": "FDA", "authoritySource": "first-page", "origin": "upload"}  # read, not scoped
    assert all(c.startswith(f"upload:{name}-chunk-") for c in upload.outputs.chunkIds)

    # an inline document and a file of another root that take the corpus document's id are refused
    (tmp_path / "elsewhere").mkdir()
    other_root = write_guidance_pdf(tmp_path / "elsewhere" / f"{name}.pdf", [PageSpec("I. X", prose("other", 5))])
    refused = ingest_request(_request(documents=[_doc(name, "Filters need no integrity test.")],
                                      paths=[str(other_root)]), store, embedder, roots=roots)
    assert refused.status == "ok" and refused.outputs.ingestedCount == 0
    assert [e.reason for e in refused.outputs.errors] == [
        f"{name}: a document of origin 'root:corpus' has this id, and only that origin replaces it "
        f"(this one is '{origin}')" for origin in ("inline", "root:elsewhere")]
    assert (_rows(store.engine, name), _document(store.engine, name)) == before  # same chunks, same authority

    # the corpus root itself still replaces its own document
    write_guidance_pdf(real, [PageSpec("I. SCOPE", prose("sterile filtration, revised", 10))])
    again = ingest_request(_request(paths=[str(real)]), store, embedder, roots=roots)
    assert again.outputs.docIds == [name] and again.outputs.documents[0].changed


def test_an_inline_documents_authority_is_mixed_whatever_the_record_says(store, embedder):
    doc_id = _unique("inline-claim")
    result = ingest_request(_request(documents=[{**_doc(doc_id, "Retained samples are kept a year."),
                                                 "source": "/work/shared/corpus/Q9_Guideline.pdf"}],
                                     authority="FDA"), store, embedder)
    assert result.outputs.documents[0].model_dump(include={"authority", "origin"}) == {
        "authority": "MIXED", "origin": "inline"}
    assert result.outputs.warnings[0].reason.startswith("issuer unknown")
    with store.engine.connect() as conn:  # the sender's "source" is kept as what it says, never as a file to open
        source, metadata = conn.execute(text("SELECT source, metadata FROM documents WHERE doc_id = :d"),
                                        {"d": doc_id}).one()
    assert source == "" and metadata["source"] == "/work/shared/corpus/Q9_Guideline.pdf"


def test_an_upload_that_fails_to_ingest_is_removed_and_a_root_file_is_not(tmp_path, settings, store, embedder,
                                                                          uploads):
    broken_upload = write_corrupt_pdf(uploads / "broken.pdf")
    broken_root = write_corrupt_pdf(tmp_path / "broken.pdf")
    result = ingest_request(_request(paths=[str(broken_upload), str(broken_root)]), store, embedder,
                            roots=[tmp_path, settings.uploads_dir])
    assert [e.path for e in result.outputs.errors] == [str(broken_upload), str(broken_root)]
    assert not broken_upload.exists() and not uploads.exists()  # the file, and its folder once empty
    assert broken_root.exists()  # the operator's files are the operator's


def test_a_document_stored_before_origins_were_kept_is_claimed_without_being_built_again(tmp_path, store, embedder):
    root = tmp_path / "legacy-root"
    root.mkdir()
    path = write_guidance_pdf(root / f"{_unique('Legacy')}.pdf", [PageSpec("I. SCOPE", prose("labels", 8))])
    ingest_request(_request(paths=[str(path)]), store, embedder, roots=[root])
    with store.engine.begin() as conn:  # as migration 0011 leaves a file's document
        conn.execute(text("UPDATE documents SET origin = '' WHERE doc_id = :d"), {"d": path.stem})
    version = store.index_version()
    again = ingest_request(_request(paths=[str(path)]), store, embedder, roots=[root])
    assert again.outputs.documents[0].changed is False and store.index_version() == version
    assert _document(store.engine, path.stem)["origin"] == "root:legacy-root"


def test_uploads_expire_with_their_documents_and_the_index_moves_on(tmp_path, store, embedder):
    """``CITESTREAM_UPLOAD_KEEP_DAYS``: an upload's document ingested longer ago goes with its chunks and its file,
    the index version moves (the worker's in-memory index drops it), an old file no document names goes, and
    a recent upload, a root's document and a fresh temporary file stay."""
    import os
    import time

    from citestream.ingest.expiry import expire_uploads
    from citestream.ingest.pipeline import from_pdf, ingest_document

    uploads = tmp_path / "uploads"
    for folder in ("aa", "bb", "cc"):
        (uploads / folder).mkdir(parents=True)
    old_pdf = write_guidance_pdf(uploads / "aa" / f"{_unique('Old')}.pdf", [PageSpec("I. SCOPE", prose("labels", 4))])
    new_pdf = write_guidance_pdf(uploads / "bb" / f"{_unique('New')}.pdf", [PageSpec("I. SCOPE", prose("vials", 4))])
    orphan = write_guidance_pdf(uploads / "cc" / "replaced.pdf", [PageSpec("I. SCOPE", prose("caps", 2))])
    root_pdf = write_guidance_pdf(tmp_path / f"{_unique('Root')}.pdf", [PageSpec("I. SCOPE", prose("seals", 4))])
    ids = {}
    for name, path, origin in (("old", old_pdf, "upload"), ("new", new_pdf, "upload"), ("root", root_pdf, "cli")):
        document = from_pdf(path, roots=[tmp_path, uploads])
        document.doc_id, document.origin = f"upload:{path.stem}" if origin == "upload" else path.stem, origin
        ids[name] = ingest_document(document, store, embedder).doc_id
    with store.engine.begin() as conn:  # the old upload and the root's document were ingested 40 days ago
        conn.execute(text("UPDATE documents SET ingested_at = now() - interval '40 days' WHERE doc_id = ANY(:d)"),
                     {"d": [ids["old"], ids["root"]]})
    forty_days_ago = time.time() - 40 * 86_400
    os.utime(orphan, (forty_days_ago, forty_days_ago))
    stale = uploads / ".incoming-x"
    stale.write_bytes(b"%PDF-")
    version = store.index_version()

    assert expire_uploads(store, uploads, keep_days=30) >= 1
    assert _document(store.engine, ids["old"]) is None and not store.chunk_ids(ids["old"])
    assert not old_pdf.exists() and not orphan.exists() and not (uploads / "aa").exists()
    assert _document(store.engine, ids["new"]) is not None and new_pdf.exists()
    assert _document(store.engine, ids["root"]) is not None and root_pdf.exists()  # only uploads expire
    assert stale.exists()  # a page may be writing it now
    assert store.index_version() != version


@pytest.mark.parametrize("doc_id", ["upload:Q9_Guideline", "Q9_Guideline.pdf", "Q9_Guideline.PDF", "a\r\nb",
                                    "a\u202eb", "a b", "-leading-dash", "../x", "x\u0000"])
def test_an_inline_docid_is_a_plain_name_never_an_uploads_a_files_or_a_log_line(doc_id):
    with pytest.raises(ValueError):
        _request(documents=[_doc(doc_id, "Retained samples are kept a year.")])


def test_an_inline_document_holds_a_files_id_only_until_the_file_comes(tmp_path, store, embedder):
    """Issue 48: a publisher took a corpus file's name first (or ``upload:<name>``), and the file's later ingest
    failed for good. Now the file's ingest replaces the inline text, and the inline text cannot take it back."""
    name = _unique("Squatted_Name")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    squat = ingest_request(_request(documents=[_doc(name, "Filters need no integrity test.")]), store, embedder)
    assert squat.outputs.docIds == [name] and squat.outputs.documents[0].origin == "inline"
    real = write_guidance_pdf(corpus / f"{name}.pdf", [PageSpec("I. SCOPE", prose("sterile filtration", 12))])
    filed = ingest_request(_request(paths=[str(real)]), store, embedder, roots=[corpus])
    assert filed.outputs.errors == [] and filed.outputs.docIds == [name]
    assert _document(store.engine, name)["origin"] == "root:corpus"
    assert all("integrity test" not in r["text"] for r in _rows(store.engine, name))
    again = ingest_request(_request(documents=[_doc(name, "Filters need no integrity test.")]), store, embedder)
    assert again.outputs.ingestedCount == 0 and "only that origin replaces it" in again.outputs.errors[0].reason


def test_a_stored_upload_keeps_its_file_when_a_later_ingest_of_it_fails(settings, store, embedder, uploads,
                                                                       monkeypatch):
    """A re-ingest of an indexed upload that fails (an issuer correction while the sandbox is over its limits, or a
    publisher's request naming the file) leaves the document's file: its pages are still shown (review after
    issue 54)."""
    from citestream.ingest import request as request_module

    path = write_guidance_pdf(uploads / f"{_unique('Kept')}.pdf", [PageSpec("I. SCOPE", prose("labels", 6))])
    first = ingest_request(_request(paths=[str(path)]), store, embedder, roots=[settings.uploads_dir])
    assert not first.outputs.errors and store.holds_source(path)
    tight = settings.model_copy(update={"ingest_max_pdf_mb": 0.0001})  # the same file is now over the limit
    monkeypatch.setattr(request_module, "get_settings", lambda: tight)
    again = ingest_request(_request(paths=[str(path)], issuer="WHO"), store, embedder, roots=[settings.uploads_dir])
    assert [e.path for e in again.outputs.errors] == [str(path)]
    assert path.exists()


def test_an_inline_document_cannot_write_the_systems_metadata(store, embedder):
    """A sender's metadata keys starting with "_" (an issuer correction's history, the pipeline version) are the
    system's and are dropped: `citestream documents history` never shows a history the sender wrote (review after
    issue 54)."""
    doc = {**_doc(_unique("meta"), "Batch records are reviewed by the quality unit before release."),
           "metadata": {"topic": "test", "_issuer_history": "forged", "_ingest_pipeline": "ingest-0"}}
    result = ingest_request(_request(documents=[doc]), store, embedder)
    assert not result.outputs.errors
    with store.engine.connect() as conn:
        stored = conn.execute(text("SELECT metadata FROM documents WHERE doc_id = :d"), {"d": doc["docId"]}).scalar()
    assert stored["topic"] == "test" and "_issuer_history" not in stored
    assert stored["_ingest_pipeline"] != "ingest-0"


def test_documents_list_never_prints_a_titles_control_characters(store, embedder, capsys):
    """A title is the sender's (an upload's PDF info, an inline document's field): `citestream documents list`
    writes its control characters as escapes, so it cannot erase the operator's lines, add rows or set the
    terminal's title (third review after issue 54, C5)."""
    from types import SimpleNamespace

    from citestream.cli.documents import cmd_documents

    doc = {**_doc(_unique("ctl"), "Batch records are reviewed by the quality unit before release."),
           "title": "Rinsing\x1b[1A\x1b[2K\nforged\tFDA\tFDA\tRow\x1b]0;owned\x07"}
    assert not ingest_request(_request(documents=[doc]), store, embedder).outputs.errors
    assert cmd_documents(SimpleNamespace(action="list")) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(doc["docId"]))
    assert "\x1b" not in line and "\x07" not in line and line.count("\t") == 3
