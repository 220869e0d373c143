"""citestream/refusals.py decides every refusal, and docs/relevance.md's table names where: each refusal code is in the
table, and each function the table names is in the module."""

from __future__ import annotations

import re
import typing

import pytest

from citestream import refusals
from citestream.config import PROJECT_ROOT
from citestream.models.answer import RelatedClause
from citestream.models.common import NoAnswerCode
from citestream.models.verdicts import ClaimVerdict, EvidenceRef

TABLE = (PROJECT_ROOT / "docs" / "relevance.md").read_text(encoding="utf-8").split("## Refusals: one table", 1)[1]
TABLE = TABLE.split("\n## ", 1)[0]


@pytest.mark.parametrize("code", typing.get_args(NoAnswerCode))
def test_every_refusal_code_is_in_the_table(code):
    assert f"| `{code}`" in TABLE


def test_every_function_the_table_names_is_in_the_module():
    rows = [line.split(" | ")[1] for line in TABLE.splitlines() if line.startswith("| ") and "`" in line]
    named = {name for row in rows for name in re.findall(r"`(\w+)`", row)}
    assert named and all(callable(getattr(refusals, name, None)) for name in named), named


def test_the_refusals_keep_their_codes_and_wording():
    assert refusals.not_relevant(0.5, 0.3) is None
    assert refusals.not_relevant(0.2, 0.3).code == "NOT_RELEVANT"
    assert refusals.wrong_authority("no EMA documents").code == "WRONG_AUTHORITY"
    assert refusals.premise_refusal("x", None).detail == 'the question assumes "x"; no document states it'
    assert refusals.premise_refusal("x", ClaimVerdict(claimId="p", claim="x", verdict="pass")) is None
    said = EvidenceRef(chunkId="c1", quote="y")
    assert "contradict (c1)" in refusals.premise_refusal("x", ClaimVerdict(claimId="p", claim="x", verdict="fail",
                                                                            evidence=[said])).detail
    assert refusals.below_answer_threshold(0.59, 0.6) and not refusals.below_answer_threshold(0.6, 0.6)
    assert refusals.no_evidence(None).code == "NOT_RELEVANT"
    clause = RelatedClause(text="t", pdf="a.pdf", page=1, chunk_id="c", relevance=0.2)
    assert refusals.near_miss(clause, 0.6, "open").code == "NOT_ANSWERING"
