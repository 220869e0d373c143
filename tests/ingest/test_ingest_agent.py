"""The ingest agent through the real broker and a worker process: documents.ingest → documents.ingested."""

import asyncio
import re

import pytest

from citestream.ops.client import publish_and_collect
from citestream.models import IngestRequest
from citestream.store import ChunkStore

from tests.support.common import new_request_id
from tests.support.ingest import PageSpec, prose, write_corrupt_pdf, write_guidance_pdf

pytestmark = pytest.mark.e2e


def _send(*requests: IngestRequest, timeout_s: float = 180):
    replies, _ = asyncio.run(publish_and_collect(
        requests, source="documents.ingest", reply="documents.ingested", timeout_s=timeout_s))
    return replies


def test_agent_ingests_inline_text_and_pdf_paths_and_reports_bad_files(worker, engine, tmp_path):
    # a name of this run's own: the worker's root is this session's temporary folder, so the file's document belongs
    # to that root (its origin), and the next session's root may not replace it
    stem = f"Agent_Guidance_{new_request_id('g')[-8:]}"
    pdf = write_guidance_pdf(tmp_path / f"{stem}.pdf", [PageSpec("I. SCOPE", prose("cleaning validation", 15))])
    broken = write_corrupt_pdf(tmp_path / "agent_broken.pdf")
    request = IngestRequest(
        request_id=new_request_id("agent-ingest"), policy_version="qa-v1", authority="FDA",
        documents=[{"docId": "agent-inline-1", "title": "Inline", "source": "test",
                    "text": "Cleaning validation protocols state acceptance limits for residues.", "metadata": {}}],
        paths=[str(pdf), str(broken)],
    )
    empty = IngestRequest(request_id=new_request_id("agent-empty"), policy_version="qa-v1")
    replies = _send(request, empty)

    result = replies[request.request_id]
    assert result.status == "ok" and result.request_id == request.request_id
    out = result.outputs
    assert set(out.docIds) == {"agent-inline-1", stem} and out.ingestedCount == 2
    assert out.chunkCount == len(out.chunkIds) >= 2
    assert all(re.match(rf"^(agent-inline-1|{stem})-chunk-\d+$", c) for c in out.chunkIds)
    assert out.collection and [e.path for e in out.errors] == [str(broken)]
    assert [t.stage for t in result.trace] == ["ingest"]
    assert set(ChunkStore(engine).chunk_ids(stem, kind="child")) <= set(out.chunkIds)

    noop = replies[empty.request_id]
    assert noop.status == "ok" and (noop.outputs.ingestedCount, noop.outputs.chunkCount) == (0, 0)
    assert noop.outputs.errors == []
