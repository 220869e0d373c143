"""Every regular expression of the package within budget on adversarial text, and the caps that bound what each one
reads (``citestream/core/bounds.py``; docs/security.md, point 11).

A pattern that backtracks can cost the square of its input: ``would it\\b.*\\bbetter`` took 10 s on 64k characters
of "would it", and one compliance record held a core for minutes. Each pattern here gets 1 MB of the text its own
parse tree makes hardest for it (``tests/support/regexes.py``), read as far as the code lets it read: a pattern of
chunking splits an inline document whole (800 kB), so it reads all of it; every other one reads at most
``MAX_SCANNED_CHARS``, which the caps below enforce. Each scan must finish within 100 ms of CPU, chunking's megabyte
within 200 ms, on an idle machine (``over_budget``).
"""

from __future__ import annotations

import json

import pytest

from citestream.compliance import classify
from citestream.core.bounds import MAX_REPLY_CHARS, MAX_SCANNED_CHARS
from citestream.core.scrub import exception_reason, scrub
from citestream.llm.base import LLMReply
from citestream.llm.execution import execute
from citestream.core.hashing import sha256_hex
from citestream.models import ComplianceRequest
from citestream.models.compliance import BoundConstraint
from citestream.models.limits import MAX_DOCUMENT_LEAVES, MAX_DOCUMENT_LEAF_CHARS
from citestream.topics import REGISTRY
from citestream.verification.terms import claim_terms

from tests.support.regexes import fill, hardest, inventory, over_budget, scan_cpu_s

BUDGET_S = 0.100  # on an idle machine; ``over_budget`` reads a cost over it against the machine's slowdown
MEGABYTE = 1_000_000
WHOLE_TEXT = ("citestream.ingest.chunking", "citestream/ingest/chunking.py")
"""Where a pattern reads an inline document whole (``chunking._split``): it gets the whole megabyte, twenty times what
any other reads, and twice the budget (``chunking._END``: 98-114 ms on an idle machine of 2026-12-03)."""
BUILT_AT_RUN_TIME = {
    "citestream/core/slots.py": "module-level tables of compiled patterns: in the inventory",
    "citestream/core/regulators.py": "module-level dicts of compiled patterns: in the inventory",
    "citestream/qa/retrieve/scope.py": "module-level: in the inventory",
    "citestream/verification/numbers.py": "module-level: in the inventory",
    "citestream/core/text_units.py": "module-level, from the shared BULLET_SIGNS: in the inventory",
    "citestream/ingest/layout.py": "module-level, from the shared BULLET_SIGNS: in the inventory",
    "citestream/ingest/chunking.py": "module-level, from the shared BULLET_SIGNS: in the inventory",
    "citestream/qa/retrieve/acronyms.py": "one escaped literal between look-arounds: linear",
    "citestream/qa/validate/rows.py": "one escaped literal between look-arounds: linear",
}
"""Calls whose pattern is built at run time, and why each is covered."""


@pytest.fixture(scope="module")
def patterns():
    found, built = inventory()
    return found, built


def _bound(where: str) -> int:
    return MEGABYTE if where.startswith(WHOLE_TEXT) else MAX_SCANNED_CHARS


def _budget(where: str) -> float:
    return 2 * BUDGET_S if where.startswith(WHOLE_TEXT) else BUDGET_S


def test_every_pattern_of_the_package_is_found(patterns):
    found, built = patterns
    assert len(found) > 150  # 177 when this was written: a broken inventory would find few
    wheres = {f.where for f in found}
    assert {"citestream.compliance.rule_evaluator.CHALLENGE", "citestream.verification.terms._IDENTIFIER"} <= wheres
    assert {call.split(":")[0] for call in built} <= set(BUILT_AT_RUN_TIME), built


def test_each_pattern_reads_its_hardest_text_within_budget(patterns):
    """The budget is CPU time of the scanning thread (others' load on a shared machine does not count); the best of
    two runs of the three hardest texts of a 2 kB probe."""
    found, _ = patterns
    over, slowest = [], (0.0, "")
    for f in found:
        bound = _bound(f.where)
        worst = max((min(scan_cpu_s(f.pattern, fill(unit, MEGABYTE)[:bound]) for _ in range(2)), unit)
                    for _, unit in hardest(f.pattern, probe_chars=2048))
        slowest = max(slowest, (worst[0], f.where))
        if over_budget(worst[0], _budget(f.where)):
            over.append(f"{f.where}: {worst[0] * 1000:.0f} ms on {bound:,} characters of {worst[1]!r}")
    print(f"{len(found)} patterns; the slowest, {slowest[1]}, {slowest[0] * 1000:.1f} ms of CPU")
    assert not over, "\n".join(over)


def test_the_patterns_of_the_issue_are_linear_on_their_own_attack():
    """The two measured in issue 48: CHALLENGE (16k characters 0.66 s, 64k 10.2 s) and the identifier pattern
    (0.2 s for one 4,000-character claim)."""
    from citestream.compliance.rule_evaluator import challenges

    for size in (16_000, 64_000, MEGABYTE):
        text = fill("would it ", size)
        started = _cpu()
        assert not challenges(text)
        assert not over_budget(_cpu() - started, BUDGET_S * size / 64_000 + 0.01)
    assert challenges("Would it not be better to use the school laptops?")
    started = _cpu()
    claim_terms(fill("1.", 4000))
    assert _cpu() - started < 0.01
    assert [t.key for t in claim_terms("Section 314.94(a)(12) and 505(j) apply") if t.named][:2] == \
        ["314.94(a)(12)", "505(j)"]


def _cpu() -> float:
    import time

    return time.thread_time()


# --- the caps that bound what a pattern reads --------------------------------------------------------------------

def _string_caps(schema: dict, defs: dict, path: str, out: dict) -> None:
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        if path.count(".") < 8:
            _string_caps(defs[name], defs, path, out)
        return
    for key in ("anyOf", "allOf", "oneOf"):
        for option in schema.get(key, []):
            _string_caps(option, defs, path, out)
    if schema.get("type") == "string" and not {"enum", "const", "format"} & set(schema):  # those no pattern reads
        out[path] = schema.get("maxLength")
    for name, prop in schema.get("properties", {}).items():
        _string_caps(prop, defs, f"{path}.{name}", out)
    if isinstance(schema.get("items"), dict):
        _string_caps(schema["items"], defs, f"{path}[]", out)
    if isinstance(schema.get("additionalProperties"), dict):
        _string_caps(schema["additionalProperties"], defs, f"{path}{{}}", out)


INPUT_TOPICS = [name for name, spec in REGISTRY.items() if not spec.sealed and name != "qa.deadletter"]


@pytest.mark.parametrize("topic", INPUT_TOPICS)
def test_every_string_a_publisher_sends_is_capped_below_what_a_pattern_reads(topic):
    """Each string field of each input topic's contract has a cap of at most ``MAX_SCANNED_CHARS``; the one longer
    string, an inline document's text, is read whole only by chunking (held to the whole megabyte above)."""
    schema = REGISTRY[topic].value_model.model_json_schema()
    caps: dict[str, int | None] = {}
    _string_caps(schema, schema.get("$defs", {}), topic, caps)
    assert caps
    longer = {path: cap for path, cap in caps.items()
              if (cap is None or cap > MAX_SCANNED_CHARS) and path != "documents.ingest.documents[].text"}
    assert not longer, longer


def test_a_compliance_document_is_capped_string_by_string_and_in_count():
    def request(document):
        return ComplianceRequest(request_id="r", document=document, constraints=[])

    request({"summary": "x" * MAX_DOCUMENT_LEAF_CHARS, "items": ["y"] * (MAX_DOCUMENT_LEAVES - 1)})
    for document in ({"summary": "x" * (MAX_DOCUMENT_LEAF_CHARS + 1)}, {"k" * 129: "x"},
                     {"items": [{"deep": ["y"]}] * (MAX_DOCUMENT_LEAVES + 1)}):
        with pytest.raises(ValueError, match="document"):
            request(document)


def test_the_evaluator_reads_a_record_of_hostile_leaves_in_seconds():
    """The most a compliance record may carry, every string a challenge to every constraint: each leaf and each
    constraint is read once (the lexical relatedness), not once per pair."""
    leaf = fill("why not would it ", MAX_DOCUMENT_LEAF_CHARS - 1) + "?"
    document = {"unknowns": [leaf] * 100, "known_constraints": ["The app must run offline"] * 20}
    constraints = [BoundConstraint(id=f"c{i}", kind="must", text=f"The app must run offline on device {i}")
                   for i in range(200)]
    assert len(json.dumps(document)) < 512 * 1024
    started = _cpu()
    out = classify(document, constraints)
    assert len(out) == 200 and _cpu() - started < 10


def test_a_reply_over_the_cap_is_a_failed_generation_never_parsed():
    class Long:
        model_name = "long"

        def complete(self, prompt: str) -> LLMReply:
            return LLMReply(text="x" * (MAX_REPLY_CHARS + 1))

    result = execute(Long(), "r-1", "p", sha256_hex("p"))
    assert result.generation_status == "FAILED" and result.raw_model_text == ""
    assert f"more than the {MAX_REPLY_CHARS}" in (result.error or "")


def test_scrubbed_text_is_cut_before_it_is_read():
    started = _cpu()
    out = scrub("password=" + fill(" postgresql+a://u:", MEGABYTE), 300)
    assert len(out) <= 300 and not over_budget(_cpu() - started, BUDGET_S)
    started = _cpu()
    reason = exception_reason(ValueError(fill(" \t", MEGABYTE) + "[SQL: SELECT secret]"))
    assert "SELECT" not in reason and not over_budget(_cpu() - started, BUDGET_S)


def test_an_identifier_pattern_keeps_its_matches():
    from citestream.verification.terms import identifiers

    assert identifiers("see 21 CFR 314.94(a)(12), 505(j) and 1.2.3(b)") == ["314.94(a)(12)", "505(j)", "1.2.3(b)"]
