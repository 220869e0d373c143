"""Query expansion (qa-contract-v1 §1, Phase A only): one declarative table, one line per rule."""

from __future__ import annotations

from dataclasses import dataclass

from .acronyms import AcronymMap


@dataclass(frozen=True)
class ExpansionRule:
    """When ``trigger`` is in the query, search again with the terms of ``adds`` that the query lacks."""

    trigger: str
    adds: tuple[str, ...]


# One line per rule; each rule needs its own test and a targeted perturbation test (qa-contract-v1 §4.2).
EXPANSION_RULES: tuple[ExpansionRule, ...] = (
    ExpansionRule("continuous processing", ("continuous manufacturing", "ICH Q13")),
)


def expand_query(query: str, rules: tuple[ExpansionRule, ...] = EXPANSION_RULES,
                 acronyms: AcronymMap | None = None) -> list[str]:
    """The original query always, then one variant per matching rule with the terms it lacks (case-insensitive),
    then one with the other form of each acronym the corpus defines (qa-v1.1: "PAT" also searches "process
    analytical technology", "bioavailability" also "BA")."""
    variants = [query]
    lowered = query.lower()
    for rule in rules:
        if rule.trigger.lower() in lowered:
            missing = [term for term in rule.adds if term.lower() not in lowered]
            if missing:
                variants.append(" ".join([query, *missing]))
    other_forms = acronyms.additions(query) if acronyms else []
    if other_forms:
        variants.append(" ".join([query, *other_forms]))
    return variants
