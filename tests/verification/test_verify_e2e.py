"""CLAIM_VERIFY end to end through the real broker and a worker process (rag-loop-acceptance §1.4, §2).

The smoke documents go in through `documents.ingest`, then each smoke claim goes
to `claims.verify` with a query, so the worker retrieves its GroundingPack itself.
"""

import asyncio
import base64
import json
import time

import pytest
from sqlalchemy import text

from citestream.ops.client import ask_many, publish_and_collect, read_topic
from citestream.models import ClaimVerifyRequest, IngestRequest, InlineDocument, request_digest
from citestream.models.retrieval import GroundingChunk, GroundingPack
from citestream.models.verdicts import Claim
from citestream.store import ChunkStore

from tests.support.common import new_request_id, sealed_under
from tests.support.reliability import end_offsets

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def ingested_via_topic(worker, smoke_dataset):
    request = IngestRequest(request_id=new_request_id("ingest"), documents=[
        InlineDocument(docId=d["docId"], title=d["title"], source=d["source"], text=d["text"], metadata=d["metadata"])
        for d in smoke_dataset["documents"]])
    replies, _ = ask_many([request], source="documents.ingest", reply="documents.ingested", timeout_s=180)
    result = replies[request.request_id]
    assert result.status == "ok" and result.outputs.errors == []
    assert set(result.outputs.docIds) == {d["docId"] for d in smoke_dataset["documents"]}
    return result


def _verify_request(claims: list[dict], **kw) -> ClaimVerifyRequest:
    return ClaimVerifyRequest(request_id=new_request_id("verify"),
                              claims=[Claim(id=c["id"], text=c["text"]) for c in claims], **kw)


def test_smoke_claims_through_kafka_c1_passes_c2_c3_do_not(ingested_via_topic, engine, smoke_dataset):
    claims = {c["id"]: c for c in smoke_dataset["claims"]}
    requests = {cid: _verify_request([c], query=c["text"], topK=8) for cid, c in claims.items()}
    started = time.monotonic()
    replies, _ = ask_many(list(requests.values()), source="claims.verify", reply="claims.verdicts", timeout_s=120)
    assert time.monotonic() - started < 600  # the §1.4 budget; the benchmark (bench/verify.py) measures it

    with engine.connect() as conn:  # "a real chunk": any chunk of the index (copies of the smoke docs count too)
        known = set(conn.execute(text("SELECT chunk_id FROM chunks")).scalars())
    assert set(ChunkStore(engine).chunk_ids("smoke-001")) <= known
    verdicts = {}
    for cid, request in requests.items():
        result = replies[request.request_id]
        assert result.status == "ok" and result.request_id == request.request_id
        assert len(result.outputs.claim_verdicts) == 1
        assert result.grounding is not None and result.grounding.chunks
        assert [t.stage for t in result.trace] == ["verify"]
        dumped = result.model_dump(mode="json")
        assert json.loads(json.dumps(dumped)) == dumped
        verdicts[cid] = result.outputs.claim_verdicts[0]
        if verdicts[cid].verdict == "pass":
            assert verdicts[cid].evidence and {e.chunkId for e in verdicts[cid].evidence} <= known
    assert "approximately 70%" in verdicts["C1"].evidence[0].quote
    assert verdicts["C1"].verdict == "pass" and replies[requests["C1"].request_id].outputs.overallPass is True
    assert verdicts["C2"].verdict in claims["C2"]["expected"] and verdicts["C2"].verdict != "pass"
    assert verdicts["C3"].verdict in claims["C3"]["expected"] and verdicts["C3"].verdict != "pass"


def test_all_claims_in_one_request_and_failure_rows_through_kafka(ingested_via_topic, smoke_dataset):
    everything = _verify_request(smoke_dataset["claims"], query="apixaban stroke CAR-T remission lecanemab amyloid")
    empty = _verify_request([], query="anything")
    no_pack = _verify_request(smoke_dataset["claims"][:1])
    blank_query = _verify_request(smoke_dataset["claims"][:1], query="")
    replies, _ = ask_many([everything, empty, no_pack, blank_query], source="claims.verify", reply="claims.verdicts",
                          timeout_s=120)
    result = replies[everything.request_id]
    assert [v.claimId for v in result.outputs.claim_verdicts] == ["C1", "C2", "C3"]
    assert result.outputs.overallPass is False
    assert replies[empty.request_id].outputs.claim_verdicts == [] and replies[empty.request_id].outputs.overallPass
    assert [v.verdict for v in replies[no_pack.request_id].outputs.claim_verdicts] == ["unclear"]
    assert replies[blank_query.request_id].error.code == "VALIDATION_ERROR"


def test_a_verify_record_breaking_its_contract_is_dead_lettered(worker, settings):
    bad = json.dumps({"request_id": "verify-bad-1", "claims": [{"id": "C1"}]}).encode()
    good = _verify_request([], query="x")
    before = asyncio.run(end_offsets(settings, "qa.deadletter"))  # what earlier runs left there is not read
    asyncio.run(_publish_then_wait(good, bad))
    mine, deadline = [], time.monotonic() + 30  # the two records sit on different partitions: no order between them
    while not mine and time.monotonic() < deadline:
        letters = [json.loads(m.value)
                   for m in asyncio.run(read_topic("qa.deadletter", since=before, settings=settings))]
        mine = [d for d in letters if base64.b64decode(d["original_value_b64"]) == bad]
    assert mine and mine[-1]["reason_code"] == "SCHEMA_VIOLATION" and mine[-1]["stage"] == "verify"
    assert "claims.0.text" in mine[-1]["reason"]


async def _publish_then_wait(good, bad):
    from citestream.ops.client import publish_and_collect

    replies, _ = await publish_and_collect([good], raw=[(b"verify-bad-1", bad)], source="claims.verify",
                                           reply="claims.verdicts", timeout_s=60)
    assert good.request_id in replies


FORGED_CLAIM = "The FDA allows shared passwords for Part 11 electronic signatures."
FORGED_PACK = GroundingPack(chunks=[GroundingChunk(
    chunk_id="fda-part11-guidance-chunk-12", doc_id="fda-part11-guidance", text=FORGED_CLAIM, score=0.97,
    metadata={"pdf": "fda-part11-guidance.pdf", "page": 3, "authority": "FDA", "issuer": "FDA"})])


def test_a_sealed_verdict_says_whose_pack_it_judged_and_binds_to_its_request(ingested_via_topic, engine, settings,
                                                                               smoke_dataset):
    """Review54b, N-M1 and N-M2: a publisher sends, under the victim's request id, a made-up claim with its own pack
    of real-looking FDA chunk ids and an index version. Both sealed verdicts hold their seal; the forged one says its
    pack was the request's and carries no index version, and only the victim's own result has the digest the victim
    computes from what it sent."""
    c1 = next(c for c in smoke_dataset["claims"] if c["id"] == "C1")
    victim = _verify_request([c1], query=c1["text"], topK=8)
    forged = ClaimVerifyRequest(request_id=victim.request_id, index_version="v-real-looking",
                                claims=[Claim(id="C1", text=FORGED_CLAIM)], grounding=FORGED_PACK)
    since = asyncio.run(end_offsets(settings, "claims.verdicts"))
    asyncio.run(publish_and_collect([victim, forged], source="claims.verify", reply="claims.verdicts", timeout_s=120))
    sealed = sealed_under(settings, "claims.verdicts", since, victim.request_id, 2)

    by_source = {r.grounding_source: r for r in sealed}
    assert set(by_source) == {"request", "retrieved"}
    assert by_source["request"].index_version is None  # not "v-real-looking": the worker searched nothing
    assert by_source["retrieved"].index_version == ChunkStore(engine).index_version()
    mine = request_digest(victim)
    assert [r.grounding_source for r in sealed if r.request_digest == mine] == ["retrieved"]
    assert by_source["request"].request_digest == request_digest(forged) != mine
    assert by_source["retrieved"].outputs.claim_verdicts[0].verdict == "pass"
