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
    r"why not|do we (?:really )?need|is (?:it|this|that) (?:really|the right)|what if|or should|change (?:to|from))\b",
    re.IGNORECASE,
)
# "would it ... better": its two ends are found one after the other. As one pattern (``would it\b.*\bbetter``)
# every "would it" read to the end of the line again: 10 s for 64k characters of them.
_WOULD = re.compile(r"\bwould (?:it|the|this|that|we|they)\b", re.IGNORECASE)
_BETTER = re.compile(r"\b(?:better|more|preferable)\b", re.IGNORECASE)
RESTATES = 0.5   # share of the constraint's terms a statement must carry to restate it
PROMOTION_SECTIONS = ("known_constraint", "constraint", "requirement")

Relatedness = Callable[[Sequence[str], Sequence[str]], list[list[float]]]
"""(texts, constraint texts) → per text, one similarity in [0, 1] per constraint; lexical overlap when none is
given. One call per document: the constraints are read once, not once per question."""


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
    text = normalize(question)
    if CHALLENGE.search(text):
        return True
    for line in text.split("\n"):  # "would it ... better" on one line, as ``.`` never crossed one
        would = _WOULD.search(line)
        if would and _BETTER.search(line, would.end()):
            return True
    return False


def lexical_relatedness(texts: Sequence[str], constraint_texts: Sequence[str]) -> list[list[float]]:
    wanted = [terms_of(t) for t in constraint_texts]
    return [[len(terms & w) / max(1, len(w)) for w in wanted] for terms in map(terms_of, texts)]


def _reopeners(questions: list[Leaf], constraints: Sequence[BoundConstraint],
               relatedness: Relatedness) -> dict[str, list[str]]:
    """Each challenging question reopens the constraint(s) it is most about."""
    out: dict[str, list[str]] = {}
    described = [f"{c.id.replace('_', ' ')}: {c.text}" for c in constraints]
    challenging = [q for q in questions if challenges(q.text)]
    if not challenging or not constraints:
        return out
    bound_terms = [constraint_terms(c) for c in constraints]
    for q, scores in zip(challenging, relatedness([q.text for q in challenging], described)):
        terms = terms_of(q.text)
        lexical = [len(terms & wanted) for wanted in bound_terms]
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
    read = [(leaf, terms_of(leaf.text), negated(leaf.text)) for leaf in statements]  # once, not once per constraint
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
        for leaf, leaf_terms, leaf_negated in read:
            if len(terms & leaf_terms) / len(terms) < RESTATES:
                continue
            if leaf_negated != expected_negated:
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
