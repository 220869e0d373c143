"""qa_semantic_compliance_output.v1: the schema, the validator's rules 1–6 and seven rejections, the evaluators.

(The agent through the real broker is in test_compliance_e2e.py.)
"""

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from citestream.compliance import (
    ReportInvalid, build_report, classify, compliance_report, embedding_relatedness, report_schema,
    report_violations, validate_report,
)
from citestream.llm import OpenAIBackend
from citestream.models import ComplianceRequest
from citestream.models.compliance import BoundConstraint

from tests.support.fake_openai import FakeOpenAI

FIXTURES = Path(__file__).parent / "fixtures"  # tests/compliance/fixtures


def _example(name: str) -> tuple[dict, list[BoundConstraint]]:
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    return data["report"], [BoundConstraint(**c) for c in data["constraints"]]


VALID, VALID_CONSTRAINTS = _example("contract_valid_example")
FAILING, FAILING_CONSTRAINTS = _example("contract_failing_example")
FOLLOWUP = json.loads((FIXTURES / "followup_vs_reopening.json").read_text())


def test_the_schema_file_is_a_valid_2020_12_schema_shipped_as_package_data():
    Draft202012Validator.check_schema(report_schema())
    assert report_schema()["properties"]["schema_version"]["const"] == "qa_semantic_compliance_output.v1"


@pytest.mark.parametrize("report, constraints", [(VALID, VALID_CONSTRAINTS), (FAILING, FAILING_CONSTRAINTS)],
                         ids=["valid-example", "failing-example"])
def test_both_contract_examples_validate(report, constraints):
    assert report_violations(report, constraints) == []
    assert validate_report(report, constraints) is report


# --- the seven parser rejections, each from a crafted report ----------------------------------------------------

def _broken(mutate, base=VALID) -> dict:
    report = copy.deepcopy(base)
    mutate(report)
    return report


def _drop_item(r):
    r["coverage"]["items"] = [i for i in r["coverage"]["items"] if i["constraint_id"] != "MATH_SCOPE"]


def _pass_with_contradiction(r):
    r["gate"] = "pass"
    r["summary"]["blocked_reasons"] = []


REJECTIONS = [
    (1, "schema", lambda r: r.update(schema_version="qa_semantic_compliance_output.v2"), VALID),
    (2, "rule 1", lambda r: r["coverage"].update(expected_count=5) or r["summary"].update(expected_constraints=5),
     VALID),
    (3, "rule 1", _drop_item, VALID),
    (4, "rule 4", lambda r: r["findings"][0].update(constraint_id="INVENTED_ID"), VALID),
    (5, "rule 5", lambda r: r["findings"][0].update(evidence_pointers=[]), VALID),
    (6, "rule 2", _pass_with_contradiction, FAILING),
    (7, "rule 6", lambda r: r["summary"].update(warnings=0), VALID),
]


@pytest.mark.parametrize("number, rule, mutate, base", REJECTIONS, ids=[f"rejection-{r[0]}" for r in REJECTIONS])
def test_each_parser_rejection_is_triggered_and_names_its_rule(number, rule, mutate, base):
    constraints = VALID_CONSTRAINTS if base is VALID else FAILING_CONSTRAINTS
    with pytest.raises(ReportInvalid) as caught:
        validate_report(_broken(mutate, base), constraints)
    assert any(v.rejection == number and v.rule == rule for v in caught.value.violations), caught.value
    assert f"parser rejection {number}" in str(caught.value) and rule in str(caught.value)


@pytest.mark.parametrize("mutate, rule, words", [
    (lambda r: r["coverage"].update(evaluated_count=3), "rule 1", "evaluated_count"),
    (lambda r: r["coverage"]["items"].append(dict(r["coverage"]["items"][0])), "rule 1", "exactly one"),
    (lambda r: r["coverage"]["items"][1].update(status="missing"), "rule 2", "must constraint 'MATH_SCOPE' is missing"),
    (lambda r: r["coverage"]["items"][1].update(status="not_evaluated")
     or r["coverage"].update(evaluated_count=3) or r["summary"].update(evaluated_constraints=3),
     "rule 3", "TRACEABILITY_GAP"),
    (lambda r: r["summary"].update(expected_constraints=5), "rule 1", "summary.expected_constraints (5)"),
    (lambda r: r["coverage"]["items"][2].update(status="missing"), "rule 2",
     "exclusion constraint 'EXISTING_SYSTEMS' is missing"),
    (lambda r: r["coverage"]["items"][0].update(status="contradicted"), "rule 3", "BOUND_CONTRADICTION"),
    (lambda r: r["coverage"]["items"][0].update(status="reopened"), "rule 3", "BOUND_REOPENED"),
    (lambda r: r["coverage"]["items"][3].update(status="missing"), "rule 3", "BOUND_MISSING_EXPLICIT"),
    (lambda r: r["findings"][0].update(evidence_pointers=["known_constraints[0]"]), "schema", "does not match"),
    (lambda r: r.update(verdict="ok"), "schema", "verdict"),
])
def test_other_rule_breaks_are_named(mutate, rule, words):
    violations = report_violations(_broken(mutate), VALID_CONSTRAINTS)
    assert any(v.rule == rule and words in str(v) for v in violations), [str(v) for v in violations]


@pytest.mark.parametrize("severity", ["error", "warning"])
def test_a_missing_should_constraint_is_consistent_with_its_finding_and_may_pass(severity):
    def mutate(r):
        r["coverage"]["items"][3]["status"] = "missing"
        r["findings"].append({"severity": severity, "code": "BOUND_MISSING_EXPLICIT",
                              "constraint_id": "PROGRESS_FEATURES", "message": "progress for parents is not stated",
                              "evidence_pointers": ["$.features"]})
        r["summary"]["errors" if severity == "error" else "warnings"] += 1
    assert report_violations(_broken(mutate), VALID_CONSTRAINTS) == []  # rule 2 fails only musts and exclusions


def test_a_report_that_is_not_an_object_is_rejected():
    assert report_violations(["not", "a", "report"], VALID_CONSTRAINTS)[0].rule == "schema"


# --- the offline evaluator -----------------------------------------------------------------------------------------

def _case_document(question: str) -> dict:
    document = copy.deepcopy(FOLLOWUP["base_document"])
    document["unknowns"] = [{"question": question}]
    return document


FOLLOWUP_CONSTRAINTS = [BoundConstraint(**c) for c in FOLLOWUP["constraints"]]


@pytest.mark.parametrize("case", FOLLOWUP["cases"], ids=[c["question"] for c in FOLLOWUP["cases"]])
def test_follow_up_is_allowed_and_reopening_is_caught(case):
    statuses = {c.constraint.id: c for c in classify(_case_document(case["question"]), FOLLOWUP_CONSTRAINTS)}
    assert statuses[case["constraint"]].status == case["expected"]
    others = [c for cid, c in statuses.items() if cid != case["constraint"]]
    assert all(c.status == "satisfied" for c in others)
    if case["expected"] == "reopened":
        assert statuses[case["constraint"]].pointers == ["$.unknowns[0].question"]


@pytest.mark.parametrize("case", FOLLOWUP["cases"], ids=[c["question"] for c in FOLLOWUP["cases"]])
def test_follow_up_vs_reopening_with_embedding_relatedness(case, embedder):
    related = embedding_relatedness(embedder)
    statuses = {c.constraint.id: c.status for c in classify(_case_document(case["question"]), FOLLOWUP_CONSTRAINTS,
                                                            related)}
    assert statuses[case["constraint"]] == case["expected"]


DOC = {
    "known_constraints": [
        {"constraint": "The app is used by a family at home"},
        {"constraint": "Exercises align with the school curriculum"},
        {"constraint": "The app integrates with existing school systems"},
    ],
    "assumptions": [{"assumption": "Parents review progress weekly"}],
    "unknowns": [{"question": "How many children will practise each day?"}],
    "summary": "A home practice app.",
}


def _classify(constraints):
    return {c.constraint.id: c for c in classify(DOC, constraints)}


def test_offline_evaluator_statuses_and_pointers():
    constraints = [
        BoundConstraint(id="DEPLOYMENT_CONTEXT", kind="must", text="The app is used by a family at home"),
        BoundConstraint(id="CURRICULUM_ALIGNMENT", kind="should", text="Align exercises with the school curriculum"),
        BoundConstraint(id="EXISTING_SYSTEMS", kind="exclusion", text="No integrations with existing systems"),
        BoundConstraint(id="OFFLINE_MODE", kind="must", text="Works offline without network access"),
        BoundConstraint(id="PROGRESS_FEATURES", kind="should", text="Parents can review progress"),
        BoundConstraint(id="BLANK", kind="must", text="  "),
    ]
    got = _classify(constraints)
    assert got["DEPLOYMENT_CONTEXT"].status == "satisfied"
    assert got["DEPLOYMENT_CONTEXT"].pointers[0] == "$.known_constraints[0].constraint"
    assert got["CURRICULUM_ALIGNMENT"].status == "contradicted" and "promoted" in got["CURRICULUM_ALIGNMENT"].reason
    assert got["EXISTING_SYSTEMS"].status == "contradicted"
    assert got["EXISTING_SYSTEMS"].pointers == ["$.known_constraints[2].constraint"]
    assert got["OFFLINE_MODE"].status == "missing"
    assert got["PROGRESS_FEATURES"].status == "satisfied"
    assert got["PROGRESS_FEATURES"].pointers == ["$.assumptions[0].assumption"]
    assert got["BLANK"].status == "not_evaluated"

    report = build_report("corr-1", list(got.values()), model="offline", policy_version="pv", latency_ms=1.0)
    assert validate_report(report, constraints) is report
    assert report["gate"] == "fail"
    codes = {(f["constraint_id"], f["code"], f["severity"]) for f in report["findings"]}
    assert codes == {("CURRICULUM_ALIGNMENT", "PROMOTION_RULE_VIOLATION", "error"),
                     ("EXISTING_SYSTEMS", "BOUND_CONTRADICTION", "error"),
                     ("OFFLINE_MODE", "BOUND_MISSING_EXPLICIT", "error"),
                     ("BLANK", "TRACEABILITY_GAP", "warning")}
    assert report["coverage"]["evaluated_count"] == 5 and report["summary"]["warnings"] == 1


def test_offline_report_passes_the_gate_when_everything_is_honoured():
    constraints = [BoundConstraint(id="DEPLOYMENT_CONTEXT", kind="must", text="The app is used by a family at home"),
                   BoundConstraint(id="NIGHT_MODE", kind="should", text="Offer a dark night theme")]
    request = ComplianceRequest(request_id="c-ok", policy_version="pv", document=DOC, constraints=constraints)
    record = compliance_report(request, "pv")
    assert record.report["gate"] == "pass" and record.evaluator == "offline"
    assert record.report["findings"][0]["severity"] == "warning"  # a missing should-constraint warns, never fails
    assert record.report["correlation_id"] == "c-ok"
    assert json.loads(record.model_dump_json()) == record.model_dump(mode="json")


# --- the LLM evaluator: its report is validated, never repaired --------------------------------------------------

@pytest.fixture(scope="module")
def fake_llm():
    with FakeOpenAI() as server:
        yield server


def _llm_request(marker: str, constraints) -> ComplianceRequest:
    return ComplianceRequest(request_id=f"c-{marker}", policy_version="pv", document={"summary": marker},
                             constraints=constraints, evaluator="llm")


def test_llm_report_that_follows_the_contract_is_accepted(fake_llm):
    fake_llm.replies["scenario-valid"] = json.dumps(VALID)
    record = compliance_report(_llm_request("scenario-valid", VALID_CONSTRAINTS), "pv",
                               lambda: OpenAIBackend(fake_llm.base_url, "fake-qa", timeout_s=5))
    assert record.report["gate"] == "pass" and record.report["correlation_id"] == "c-scenario-valid"
    assert record.report["meta"]["model"] == "fake-qa" and record.report["meta"]["input_tokens"] > 0
    assert "id=EXISTING_SYSTEMS kind=exclusion" in fake_llm.prompts[-1]


def test_llm_report_breaking_a_rule_raises_with_that_rule(fake_llm):
    fake_llm.replies["scenario-hallucinated"] = json.dumps(_broken(lambda r: r["findings"][0].update(
        constraint_id="GAMIFICATION")))
    fake_llm.replies["scenario-prose"] = "The document looks fine to me."
    backend = lambda: OpenAIBackend(fake_llm.base_url, "fake-qa", timeout_s=5)  # noqa: E731
    with pytest.raises(ReportInvalid, match="rule 4"):
        compliance_report(_llm_request("scenario-hallucinated", VALID_CONSTRAINTS), "pv", backend)
    with pytest.raises(ReportInvalid, match="not a JSON report"):
        compliance_report(_llm_request("scenario-prose", VALID_CONSTRAINTS), "pv", backend)


def test_llm_reply_with_a_lone_surrogate_is_a_malformed_report_not_a_record(fake_llm):
    """N4: a ``\\ud800`` escape passed the schema and the rules, then the record could not be sealed (no fate). It
    is now refused as a malformed reply (REPORT_INVALID, as a reply that is not JSON); a paired escape is text."""
    lone = copy.deepcopy(VALID)
    lone["findings"][0]["message"] = "cheap \ud800 trick"
    fake_llm.replies["scenario-lone-surrogate"] = json.dumps(lone)  # sent as the escape \ud800
    paired = copy.deepcopy(VALID)
    paired["findings"][0]["message"] = "an emoji \U0001F600 is fine"
    fake_llm.replies["scenario-paired-surrogates"] = json.dumps(paired)  # sent as \ud83d\ude00
    backend = lambda: OpenAIBackend(fake_llm.base_url, "fake-qa", timeout_s=5)  # noqa: E731
    with pytest.raises(ReportInvalid, match="lone surrogate"):
        compliance_report(_llm_request("scenario-lone-surrogate", VALID_CONSTRAINTS), "pv", backend)
    record = compliance_report(_llm_request("scenario-paired-surrogates", VALID_CONSTRAINTS), "pv", backend)
    assert record.report["findings"][0]["message"] == "an emoji \U0001F600 is fine"
    assert json.loads(record.model_dump_json())["report"]["findings"][0]["message"].endswith("is fine")


def test_llm_reply_over_the_reply_cap_is_a_failed_call_not_read(fake_llm):
    """N4: the reply cap of the other LLM paths (``MAX_REPLY_CHARS``, the R3 wrapper) holds for the evaluator: a
    longer reply, even valid JSON, is never parsed; the call fails (the agent dead-letters it as STAGE_ERROR)."""
    from citestream.core.bounds import MAX_REPLY_CHARS
    from citestream.llm import LLMError

    padded = json.dumps(VALID) + " " * MAX_REPLY_CHARS  # valid JSON, trailing whitespace past the cap
    fake_llm.replies["scenario-over-cap"] = padded
    fake_llm.replies["scenario-at-cap"] = json.dumps(VALID).ljust(MAX_REPLY_CHARS)
    backend = lambda: OpenAIBackend(fake_llm.base_url, "fake-qa", timeout_s=5)  # noqa: E731
    asked = len(fake_llm.requests)
    with pytest.raises(LLMError, match=f"more than the {MAX_REPLY_CHARS}"):
        compliance_report(_llm_request("scenario-over-cap", VALID_CONSTRAINTS), "pv", backend)
    assert len(fake_llm.requests) == asked + 1  # one call: a reply over the cap is permanent, not retried
    at_cap = compliance_report(_llm_request("scenario-at-cap", VALID_CONSTRAINTS), "pv", backend)
    assert at_cap.report["gate"] == "pass"  # the cap itself is read
