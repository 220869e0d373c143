"""Query expansion (qa-contract-v1 §1, Phase A only): one declarative table, one line per rule."""

from __future__ import annotations

from dataclasses import dataclass

from .lexicon import CorpusLexicon


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
                 lexicon: CorpusLexicon | None = None) -> list[str]:
    """The original query always, then one variant per matching rule with the terms it lacks (case-insensitive),
    then one in the corpus' own words (qa-v1.1): typos in its spelling, acronyms it defines in both forms ("PAT"
    also searches "process analytical technology", "bioavailability" also "BA")."""
    variants = [query]
    lowered = query.lower()
    for rule in rules:
        if rule.trigger.lower() in lowered:
            missing = [term for term in rule.adds if term.lower() not in lowered]
            if missing:
                variants.append(" ".join([query, *missing]))
    in_corpus_words = lexicon.variant(query) if lexicon else None
    if in_corpus_words:
        variants.append(in_corpus_words)
    return variants
