"""The deterministic offline evaluator: each bound constraint → satisfied / missing / contradicted / reopened /
not_evaluated, from the document's own text, with JSONPath pointers to what decided it.

- reopened: a question in the document challenges the decision (should we…, instead, would … better,
  which … should…) and is about this constraint more than any other. A question that accepts the
  decision and asks for details (how many…, what ranges…) is a follow-up and is fine.
- contradicted: a statement restates the constraint with the opposite polarity (an exclusion asserted,
  a must negated), or a should-constraint is promoted into the known constraints.
- satisfied: a statement restates it with the same polarity.
- missing: nothing restates it. not_evaluated: empty/malformed constraint text, or evidence both ways.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..models.compliance import BoundConstraint
from ..core.text_units import content_terms, normalize
from ..verification.checks import negated
from .document import Leaf, leaves

CHALLENGE = re.compile(
    r"\b(should (?:we|i|the|it|they|this)|instead|rather than|reconsider|alternatives?|switch(?:ing)? to|"
    r"would (?:it|the|this|that|we|they)\b.*\b(?:better|more|preferable)|why not|do we (?:really )?need|"
    r"is (?:it|this|that) (?:really|the right)|what if|or should|change (?:to|from))\b",
    re.IGNORECASE,
)
RESTATES = 0.5   # share of the constraint's terms a statement must carry to restate it
PROMOTION_SECTIONS = ("known_constraint", "constraint", "requirement")

Relatedness = Callable[[str, Sequence[str]], list[float]]
"""(text, constraint texts) → one similarity in [0, 1] per constraint; lexical overlap when none is given."""


@dataclass
class Classification:
    constraint: BoundConstraint
    status: str
    pointers: list[str] = field(default_factory=list)
    reason: str = ""


def _root(term: str) -> str:
    """Fold the -ed/-e endings text.stem keeps on short words, so 'used' meets 'use' and 'based' meets 'base'."""
    if len(term) >= 4 and term.endswith("ed"):
        term = term[:-2]
    return term[:-1] if len(term) >= 3 and term.endswith("e") else term


def terms_of(text: str) -> set[str]:
    return {_root(t) for t in content_terms(text)}


def constraint_terms(c: BoundConstraint) -> set[str]:
    return terms_of(c.text) | terms_of(c.id.replace("_", " ").replace("-", " "))


def challenges(question: str) -> bool:
    return bool(CHALLENGE.search(normalize(question)))


def lexical_relatedness(text: str, constraint_texts: Sequence[str]) -> list[float]:
    terms = terms_of(text)
    return [len(terms & terms_of(t)) / max(1, len(terms_of(t))) for t in constraint_texts]


def _reopeners(questions: list[Leaf], constraints: Sequence[BoundConstraint],
               relatedness: Relatedness) -> dict[str, list[str]]:
    """Each challenging question reopens the constraint(s) it is most about."""
    out: dict[str, list[str]] = {}
    described = [f"{c.id.replace('_', ' ')}: {c.text}" for c in constraints]
    for q in questions:
        if not challenges(q.text):
            continue
        lexical = [len(terms_of(q.text) & constraint_terms(c)) for c in constraints]
        scores = relatedness(q.text, described)
        combined = [s + (1.0 if n else 0.0) for s, n in zip(scores, lexical)]
        best = max(combined, default=0.0)
        if best <= 0.15:
            continue  # a challenge to nothing bound here
        for c, score in zip(constraints, combined):
            if score == best:
                out.setdefault(c.id, []).append(q.path)
    return out


def classify(document: dict, constraints: Sequence[BoundConstraint],
             relatedness: Relatedness = lexical_relatedness) -> list[Classification]:
    doc_leaves = leaves(document)
    questions = [leaf for leaf in doc_leaves if leaf.is_question]
    statements = [leaf for leaf in doc_leaves if not leaf.is_question]
    reopened = _reopeners(questions, constraints, relatedness)
    out = []
    for c in constraints:
        terms = terms_of(c.text)
        if not terms:
            out.append(Classification(c, "not_evaluated", reason="constraint text is empty or malformed"))
            continue
        if c.id in reopened:
            out.append(Classification(c, "reopened", reopened[c.id], "a question challenges the decision"))
            continue
        expected_negated = negated(c.text) or (c.kind == "exclusion")
        agree, disagree, promoted = [], [], []
        for leaf in statements:
            if len(terms & terms_of(leaf.text)) / len(terms) < RESTATES:
                continue
            if negated(leaf.text) != expected_negated:
                disagree.append(leaf.path)
            elif c.kind == "should" and any(s in leaf.section.lower() for s in PROMOTION_SECTIONS):
                promoted.append(leaf.path)
            else:
                agree.append(leaf.path)
        if promoted:
            out.append(Classification(c, "contradicted", promoted, "should-priority answer promoted to a constraint"))
        elif disagree and agree:
            out.append(Classification(c, "not_evaluated", agree + disagree, "evidence points both ways"))
        elif disagree:
            out.append(Classification(c, "contradicted", disagree, "the document states the opposite"))
        elif agree:
            out.append(Classification(c, "satisfied", agree))
        else:
            out.append(Classification(c, "missing", reason="not stated in the document"))
    return out
