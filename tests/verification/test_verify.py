"""CLAIM_VERIFY without servers: the offline judge, the fail-closed rules, §4.4 and §4.5, the LLM judge.

(The LLM judge talks HTTP to a local fake OpenAI server; the broker path is in test_verify_e2e.py.)
"""

import json

import pytest
from pydantic import ValidationError

from citestream.ops.demo_pdfs import smoke_dataset
from citestream.llm import OpenAIBackend
from citestream.models import ClaimVerifyRequest, ClaimVerifyResult, request_digest
from citestream.models.agent import AgentError
from citestream.models.retrieval import GroundingChunk, GroundingPack
from citestream.models.verdicts import Claim, ClaimVerdict, EvidenceRef
from citestream.verification import LLMJudge, OfflineJudge, fail_closed, verify_claims
from citestream.verification.numbers import check_numbers

from tests.support.fake_openai import FakeOpenAI

DATA = smoke_dataset()
PACK = GroundingPack(chunks=[
    GroundingChunk(chunk_id=f"{d['docId']}-chunk-0", doc_id=d["docId"], text=d["text"], score=0.9 - i / 10)
    for i, d in enumerate(DATA["documents"])
])
CLAIMS = {c["id"]: c["text"] for c in DATA["claims"]}


def _request(claims, grounding=PACK, **kw) -> ClaimVerifyRequest:
    return ClaimVerifyRequest(request_id="v-1", claims=[Claim(id=f"K{i}", text=t) for i, t in enumerate(claims)],
                              grounding=grounding, **kw)


def _no_retrieval(*_):
    raise AssertionError("no query was given: nothing should be retrieved")


def _verify(request, judge=None, pack_for_query=_no_retrieval) -> ClaimVerifyResult:
    result = verify_claims(request, judge or OfflineJudge(), pack_for_query, "pv-test", "idx-test")
    _assert_round_trip(result)
    return result


def _assert_round_trip(result: ClaimVerifyResult) -> None:
    """rag-loop-acceptance §1.4: every response survives json.dumps → json.loads without data loss."""
    dumped = result.model_dump(mode="json")
    again = json.loads(json.dumps(dumped))
    assert again == dumped
    assert ClaimVerifyResult.model_validate(again) == result


def _verdict(claim: str, pack: GroundingPack = PACK) -> ClaimVerdict:
    return OfflineJudge().judge(Claim(id="x", text=claim), pack)


# --- the smoke claims of §2.3 ------------------------------------------------------------------------------------

def test_smoke_claims_c1_passes_with_a_real_chunk_c2_c3_do_not():
    result = _verify(_request([CLAIMS["C1"], CLAIMS["C2"], CLAIMS["C3"]]))
    c1, c2, c3 = result.outputs.claim_verdicts
    assert c1.verdict == "pass" and [e.chunkId for e in c1.evidence] == ["smoke-001-chunk-0"]
    assert "approximately 70%" in c1.evidence[0].quote
    assert c2.verdict == "fail" and "95%" in c2.rationale
    assert c3.verdict in {"fail", "unclear"} and "tau" in c3.rationale
    assert result.outputs.overallPass is False
    assert result.status == "ok" and result.request_id == "v-1" and result.grounding == PACK


# --- fail closed: numbers, negation, direction, roles, entities -------------------------------------------------

@pytest.mark.parametrize("claim, expected", [
    ("CAR-T cell therapy achieved complete remission rates exceeding 80% in ALL", "pass"),
    ("CAR-T therapy achieves 95% remission in ALL", "fail"),            # source says >80%, not 95%
    ("CAR-T therapy achieves complete remission rates exceeding 90% in ALL", "fail"),
    ("Lecanemab showed a 35% reduction in cognitive decline over 18 months", "fail"),
    ("Lecanemab received FDA accelerated approval in 2021", "unclear"),  # a year the source never states
    ("Apixaban reduces stroke risk by 70% in AFib patients", "pass"),     # "approximately 70%" in the source
])
def test_numbers_must_be_implied_by_the_evidence(claim, expected):
    assert _verdict(claim).verdict == expected


def test_quantity_intervals():
    assert check_numbers("95% remission", "rates exceeding 80%").unsupported != []
    assert check_numbers("95% remission", "rates exceeding 80%").conflicting
    assert check_numbers("more than 80% remission", "95% remission").unsupported == []
    assert check_numbers("approximately 70%", "70%").unsupported == []
    assert check_numbers("within 30 days", "within 30 days").unsupported == []
    assert check_numbers("12 months", "18 months").conflicting
    assert check_numbers("up to two requests", "grant one request").unsupported     # a ceiling is not a value under it
    assert check_numbers("up to two requests", "up to two requests").unsupported == []


def test_a_single_is_one_and_the_pronoun_one_is_no_quantity():
    """"in one species" is stated by "in a single species"; "the original one goes back" claims no amount."""
    assert check_numbers("general toxicity in one species", "toxicity in a single species").unsupported == []
    assert check_numbers("toxicity in one species", "toxicity in two species").unsupported != []
    assert check_numbers("a single dose", "the dose").unsupported != []  # still a quantity to be stated
    assert check_numbers("even if the original one goes back on the market", "resumes marketing").unsupported == []
    assert check_numbers("each one of them is reviewed", "all are reviewed").unsupported == []
    assert check_numbers("the one-year period", "the two-year period").conflicting  # with a unit it is a number


@pytest.mark.parametrize("claim", [
    "Lecanemab targets tau protein tangles",                          # entity swapped: amyloid-beta vs tau
    "Lecanemab targets soluble tau protofibrils",                     # one word swapped, the rest matches
    "Warfarin reduces stroke risk by approximately 70% in AFib patients",   # actor swapped
])
def test_swapped_entity_or_actor_never_passes(claim):
    assert _verdict(claim).verdict != "pass"


@pytest.mark.parametrize("claim, reason", [
    ("The ARISTOTLE trial demonstrated warfarin's superiority over apixaban", "roles swapped"),
    ("Apixaban increases stroke risk by approximately 70% in AFib patients", "evidence says decreas"),
    ("Apixaban does not reduce stroke risk in atrial fibrillation patients", "negation"),
])
def test_stated_contradictions_fail(claim, reason):
    verdict = _verdict(claim)
    assert verdict.verdict == "fail" and reason in verdict.rationale


def test_supported_claims_pass_with_their_sentence():
    for claim in ("Lecanemab targets soluble amyloid-beta protofibrils",
                  "The ARISTOTLE trial demonstrated apixaban's superiority over warfarin"):
        verdict = _verdict(claim)
        assert verdict.verdict == "pass" and verdict.evidence[0].chunkId in {c.chunk_id for c in PACK.chunks}


def test_negation_elsewhere_in_the_sentence_does_not_flip_the_claim():
    pack = GroundingPack(chunks=[GroundingChunk(chunk_id="d-chunk-0", doc_id="d", score=0.5, text=(
        "Seizure of distributed batches should be considered when there are significant deficiencies with "
        "validation or the evidence demonstrates the product does not comply with specifications."))])
    claim = "Seizure of distributed batches should be considered when there are significant deficiencies"
    assert _verdict(claim, pack).verdict == "pass"


# --- rag-loop-acceptance §4.4 evidence mismatch --------------------------------------------------------------------

def test_failure_claim_supported_by_evidence():
    v = _verify(_request([CLAIMS["C1"]])).outputs.claim_verdicts[0]
    assert v.verdict == "pass" and v.evidence and v.evidence[0].chunkId in {c.chunk_id for c in PACK.chunks}


def test_failure_claim_contradicted_by_evidence():
    result = _verify(_request([CLAIMS["C2"]]))
    assert result.outputs.claim_verdicts[0].verdict in {"fail", "unclear"} and result.outputs.overallPass is False


def test_failure_claim_with_no_matching_evidence_is_unclear():
    v = _verify(_request(["Metformin lowers HbA1c in type 2 diabetes"])).outputs.claim_verdicts[0]
    assert v.verdict == "unclear" and v.evidence == []


@pytest.mark.parametrize("grounding", [None, GroundingPack()])
def test_failure_missing_or_empty_grounding_pack_makes_every_claim_unclear(grounding):
    result = _verify(_request([CLAIMS["C1"], CLAIMS["C2"]], grounding=grounding))
    assert [v.verdict for v in result.outputs.claim_verdicts] == ["unclear", "unclear"]
    assert result.outputs.overallPass is False and result.status == "ok"


def test_failure_evidence_chunk_not_in_pack_is_dropped_and_pass_fails_closed():
    stray = ClaimVerdict(claimId="K0", claim="c", verdict="pass", evidence=[EvidenceRef(chunkId="ghost-chunk-9")])
    guarded = fail_closed(stray, PACK)
    assert guarded.verdict == "unclear" and guarded.evidence == []
    mixed = stray.model_copy(update={"evidence": [EvidenceRef(chunkId="ghost-chunk-9"),
                                                  EvidenceRef(chunkId="smoke-001-chunk-0")]})
    kept = fail_closed(mixed, PACK)
    assert kept.verdict == "pass" and [e.chunkId for e in kept.evidence] == ["smoke-001-chunk-0"]
    assert "dropped" in kept.rationale


def test_failure_numeric_claim_slightly_off_gets_a_verdict():
    for claim in ("Apixaban reduces stroke risk by ~70% in AFib patients",
                  "Apixaban reduces stroke risk by 71% in AFib patients"):
        assert _verify(_request([claim])).outputs.claim_verdicts[0].verdict in {"pass", "fail", "unclear"}


# --- rag-loop-acceptance §4.5 malformed input ----------------------------------------------------------------------

def test_failure_empty_claims_pass_vacuously():
    result = _verify(_request([]))
    assert result.outputs.claim_verdicts == [] and result.outputs.overallPass is True and result.status == "ok"


def test_failure_missing_request_id_is_rejected_by_the_contract():
    with pytest.raises(ValidationError, match="request_id"):
        ClaimVerifyRequest.model_validate({"claims": [{"id": "C1", "text": "x"}]})


def test_failure_empty_query_is_a_validation_error_with_verdicts_still_one_per_claim():
    result = _verify(_request([CLAIMS["C1"]], grounding=None, query="  "))
    assert result.status == "error" and result.error.code == "VALIDATION_ERROR"
    assert [v.verdict for v in result.outputs.claim_verdicts] == ["unclear"]


def test_failure_missing_collection_is_task_failed():
    def missing(*_):
        return None, AgentError(code="TASK_FAILED", message="no chunks table")

    result = _verify(_request([CLAIMS["C1"]], grounding=None, query="stroke"), pack_for_query=missing)
    assert result.status == "error" and result.error.code == "TASK_FAILED"
    assert result.outputs.claim_verdicts[0].verdict == "unclear" and result.outputs.overallPass is False


@pytest.mark.parametrize("top_k, clamped", [(0, 1), (-1, 1), (999, 100), (8, 8)])
def test_failure_top_k_out_of_range_is_clamped(top_k, clamped):
    assert ClaimVerifyRequest(request_id="v-2", topK=top_k).topK == clamped


def test_query_retrieves_the_pack_once_with_scope_and_top_k():
    calls = []

    def pack_for_query(query, scope, k):
        calls.append((query, scope, k))
        return PACK, None

    result = _verify(_request([CLAIMS["C1"], CLAIMS["C3"]], grounding=None, query="apixaban", scope="FDA", topK=5),
                     pack_for_query=pack_for_query)
    assert calls == [("apixaban", "FDA", 5)]
    assert result.outputs.claim_verdicts[0].verdict == "pass" and result.grounding == PACK


def test_a_supplied_pack_is_sealed_as_the_requests_own_and_never_with_its_index_version():
    """Review54b, N-M1: a publisher's pack may pass its claim, but the result says the pack was the request's and
    carries no index version (the request's "v-real-looking" least of all); a retrieved pack carries the worker's."""
    supplied = _verify(_request([CLAIMS["C1"]], index_version="v-real-looking"))
    assert supplied.outputs.overallPass is True  # the contract lets a publisher send its pack ...
    assert (supplied.grounding_source, supplied.index_version) == ("request", None)  # ... and the result says so
    retrieved = _verify(_request([CLAIMS["C1"]], grounding=None, query="apixaban", index_version="v-real-looking"),
                        pack_for_query=lambda *_: (PACK, None))
    assert (retrieved.grounding_source, retrieved.index_version) == ("retrieved", "idx-test")
    nothing = _verify(_request([CLAIMS["C1"]], grounding=None, index_version="v-real-looking"))
    assert (nothing.grounding_source, nothing.index_version) == (None, None)


def test_a_result_carries_the_digest_of_what_was_asked():
    """Review54b, N-M2: the consumer's own ``request_digest`` of what it sent equals the result's; another party's
    request under the same request id (another pack, or a query instead of the pack) gives another digest."""
    mine = _request([CLAIMS["C1"]])
    result = _verify(mine)
    assert result.request_digest == request_digest(ClaimVerifyRequest.model_validate_json(mine.model_dump_json()))
    other_pack = GroundingPack(chunks=[PACK.chunks[0].model_copy(update={"text": "Apixaban cures everything."})])
    for other in (_request([CLAIMS["C1"]], grounding=other_pack),
                  _request([CLAIMS["C1"]], grounding=None, query="apixaban")):
        assert other.request_id == mine.request_id
        assert _verify(other, pack_for_query=lambda *_: (PACK, None)).request_digest != request_digest(mine)


# --- the optional LLM judge, behind the same interface --------------------------------------------------------------

@pytest.fixture(scope="module")
def fake_llm():
    with FakeOpenAI() as server:
        yield server


def _llm_judge(server) -> LLMJudge:
    return LLMJudge(OpenAIBackend(server.base_url, "fake-judge", timeout_s=5))


def test_llm_judge_pass_is_kept_with_real_evidence(fake_llm):
    fake_llm.replies["by approximately 70% in AFib"] = json.dumps(
        {"verdict": "pass", "evidence": [{"chunkId": "smoke-001-chunk-0", "quote": "reduce stroke risk"}],
         "rationale": "stated"})
    v = _verify(_request([CLAIMS["C1"]]), judge=_llm_judge(fake_llm)).outputs.claim_verdicts[0]
    assert v.verdict == "pass" and v.evidence[0].chunkId == "smoke-001-chunk-0"
    assert "[chunk_id=smoke-002-chunk-0]" in fake_llm.prompts[-1]


def test_llm_judge_evidence_outside_the_pack_fails_closed(fake_llm):
    fake_llm.replies["Lecanemab targets tau"] = json.dumps(
        {"verdict": "pass", "evidence": [{"chunkId": "invented-chunk-7"}], "rationale": "trust me"})
    result = _verify(_request([CLAIMS["C3"]]), judge=_llm_judge(fake_llm))
    assert result.outputs.claim_verdicts[0].verdict == "unclear" and result.outputs.overallPass is False


def test_llm_judge_pass_on_a_numeric_conflict_is_vetoed(fake_llm):
    fake_llm.replies["95% remission"] = json.dumps(
        {"verdict": "pass", "evidence": [{"chunkId": "smoke-002-chunk-0", "quote": "complete remission rates exceeding "
                                          "80% in relapsed/refractory B-cell acute lymphoblastic leukemia"}],
         "rationale": "close enough"})
    v = _verify(_request([CLAIMS["C2"]]), judge=_llm_judge(fake_llm)).outputs.claim_verdicts[0]
    assert v.verdict == "fail" and "offline veto" in v.rationale


def test_llm_judge_garbage_or_unreachable_is_unclear(fake_llm):
    fake_llm.replies["Apixaban prevents migraines"] = "certainly! it passes"
    v = _verify(_request(["Apixaban prevents migraines"]), judge=_llm_judge(fake_llm)).outputs.claim_verdicts[0]
    assert v.verdict == "unclear" and "JSON" in v.rationale
    down = LLMJudge(OpenAIBackend("http://127.0.0.1:9/v1", "nobody", timeout_s=2))
    result = _verify(_request([CLAIMS["C1"], CLAIMS["C2"]]), judge=down)
    assert {v.verdict for v in result.outputs.claim_verdicts} == {"unclear"} and result.outputs.overallPass is False


def test_judge_is_chosen_by_settings():
    from types import SimpleNamespace

    from citestream.verification import judge_from_settings

    from citestream.verification import RelevanceJudge

    model = object()
    chosen = judge_from_settings(SimpleNamespace(verify_judge="relevance"), lambda: None, lambda: model)
    assert isinstance(chosen, RelevanceJudge) and chosen.relevance is model
    assert isinstance(judge_from_settings(SimpleNamespace(verify_judge="rules"), lambda: None, lambda: None),
                      OfflineJudge)
    backend = OpenAIBackend("http://127.0.0.1:9/v1", "m")
    assert judge_from_settings(SimpleNamespace(verify_judge="llm"), lambda: backend, lambda: None).backend is backend
    with pytest.raises(ValueError, match="verify_judge"):
        judge_from_settings(SimpleNamespace(verify_judge="oracle"), lambda: None, lambda: None)


def test_llm_judge_quote_its_chunk_does_not_hold_is_dropped_and_the_pass_fails_closed(fake_llm):
    """A model may not put words in a chunk: a quote the cited chunk does not hold goes with its reference, and a
    pass left with no evidence is unclear (second review after issue 54, N7)."""
    fake_llm.replies["by approximately 70% in AFib"] = json.dumps(
        {"verdict": "pass", "evidence": [{"chunkId": "smoke-001-chunk-0", "quote": "cures every stroke forever"}],
         "rationale": "stated"})
    result = _verify(_request([CLAIMS["C1"]]), judge=_llm_judge(fake_llm))
    assert result.outputs.claim_verdicts[0].verdict == "unclear" and result.outputs.overallPass is False


def test_llm_judge_reply_with_a_repeated_key_is_unclear(fake_llm):
    """The reply is read as generation's is: a repeated key is malformed, not last-one-wins."""
    fake_llm.replies["by approximately 70% in AFib"] = (
        '{"verdict": "fail", "verdict": "pass", "evidence": [{"chunkId": "smoke-001-chunk-0"}], "rationale": "x"}')
    v = _verify(_request([CLAIMS["C1"]]), judge=_llm_judge(fake_llm)).outputs.claim_verdicts[0]
    assert v.verdict == "unclear" and "JSON" in v.rationale


@pytest.mark.parametrize("quote", [None, "", "the", "stroke risk"])
def test_llm_judge_pass_on_a_quote_that_shows_nothing_fails_closed(fake_llm, quote):
    """A quote of fewer than three words is held by almost any chunk: it is no evidence (third review after issue
    54, C4)."""
    ref = {"chunkId": "smoke-001-chunk-0", **({} if quote is None else {"quote": quote})}
    fake_llm.replies["by approximately 70% in AFib"] = json.dumps(
        {"verdict": "pass", "evidence": [ref], "rationale": "stated"})
    assert _verify(_request([CLAIMS["C1"]]), judge=_llm_judge(fake_llm)).outputs.claim_verdicts[0].verdict == "unclear"
