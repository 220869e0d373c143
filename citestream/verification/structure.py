"""Who does what, compared between a claim and a sentence: the conflicts word overlap cannot see.

Each clause of the claim (``clauses``: predicate, doers, undergoers, polarity from the dependency parse) is set
against the sentence's clauses with the same predicate and the same undergoer (or none stated on one side):

* **actor swapped** — the sentence names who does it, and it is not the claim's doer ("the applicant selects the
  reference standard" against "the reference standard selected by FDA"; two parties that trade places too);
* **polarity flipped** — the sentence's clause is negated where the claim's is not, or the reverse, its negation
  read where the parse puts it ("does not consider", "no … is required", "need not", "is not necessary to …");
* **undergoer swapped** — the sentence does the claim's act to another party ("notify the applicant" against
  "notify FDA");
* **recipient swapped** — the sentence sends what the claim sends to another party ("send the applicant the
  notification" against "submit the notification to FDA"; any two verbs of ``TRANSFERS``).

A clause whose predicate the sentence does not use is not compared: a restatement may change the verb, and then
the model and the other checks decide. Who and what the claim is about (its doers and subjects) must also be
stated by the evidence itself for the claim to pass, however it is worded (``participants``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from ..core.clauses import Clause, clauses
from ..core.text_units import stem
from .documents import SELF_NOUNS
from .synonyms import synonymous

_DOCUMENT = "<the document>"


def _same(a: str, b: str) -> bool:
    return a == b or stem(a) == stem(b)


def _shares(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    return any(_same(a, b) for a in mine for b in theirs)


def _about_the_same(claim: Clause, other: Clause) -> bool:
    """Same predicate, and the same thing undergoes it where both sentences say what."""
    return _same(claim.predicate, other.predicate) and (
        not claim.patients or not other.patients or _shares(claim.patients, other.patients))


def _same_party(claim: Clause, theirs: frozenset[str]) -> bool:
    """The claim's doer in the sentence's words: the same word, or a synonym in a common sense ("maker" for
    "manufacturer")."""
    return any(_same(a, b) or synonymous(a, b) for a in claim.agents for b in theirs)


def _initials_of(short: str, head: str, words: frozenset[str]) -> bool:
    """``short`` is spelled by the first letters of the phrase's words, its head among them ("wg" for "DQST Working
    Group"; the phrase's words come unordered, so its letters are counted)."""
    if not 2 <= len(short) <= 6 or not short.isalpha() or short in words or head[:1] not in short:
        return False
    initials = Counter(w[0] for w in words if w[:1].isalpha())
    return not Counter(short) - initials


def _abbreviated(claim: Clause, other: Clause) -> bool:
    """One side names the doer by its initials, the other spells it out ("the WG" and "the Working Group")."""
    return any(_initials_of(b, a, claim.agent_words) or _initials_of(a, b, other.agent_words)
               for a in claim.agents for b in other.agents)


def _one_party(claim: Clause, other: Clause) -> bool:
    return _shares(claim.agents, other.agents) or _abbreviated(claim, other)


def _actor_conflict(claim: Clause, aligned: list[Clause]) -> str | None:
    """The sentence names another doer, and the claim's doer is not in the sentence's doer phrase (where a parse
    that took a heading run into the sentence for the subject still finds the name)."""
    if not claim.agents:
        return None
    if any(_same_party(claim, e.agents | e.agent_words) or _abbreviated(claim, e) for e in aligned):
        return None
    for e in aligned:
        if e.agents:
            return (f"who does '{claim.predicate}' differs: the claim says {'/'.join(sorted(claim.agents))}, "
                    f"the evidence {'/'.join(sorted(e.agents))}")
    return None


def _polarity_conflict(claim: Clause, aligned: list[Clause]) -> str | None:
    same_party = [e for e in aligned if not claim.agents or not e.agents or _one_party(claim, e)]
    if not same_party or any(e.negated == claim.negated for e in same_party):
        return None
    claimed, stated = ("denies", "asserts") if claim.negated else ("asserts", "denies")
    return f"polarity differs on '{claim.predicate}': the claim {claimed} it, the evidence {stated} it"


PARTIES = frozenset("fda agency applicant sponsor manufacturer holder investigator firm distributor wholesaler "
                    "inspector petitioner cder cber".split())
"""Who a rule is between: a party the claim has undergo an act ("notify the applicant") is not one the sentence has
undergo it ("notify FDA")."""


def _party_conflict(claim: Clause, theirs: tuple[Clause, ...], parties: Callable[[Clause], frozenset[str]],
                    about: Callable[[Clause, Clause], bool], role: str) -> str | None:
    """A sentence's clause ``about`` the claim's, by the same doer or none named, with another party of the role
    ``parties`` reads; ``role`` names it in the reason ("who undergoes '{}'")."""
    mine = frozenset(p for p in parties(claim) if stem(p) in PARTIES)
    if not mine:
        return None
    for e in theirs:
        if not about(claim, e) or (claim.agents and e.agents and not _one_party(claim, e)):
            continue
        stated = frozenset(p for p in parties(e) if stem(p) in PARTIES)
        if stated and not _shares(mine, stated):
            return (f"{role.format(claim.predicate)} differs: the claim says {'/'.join(sorted(mine))}, the evidence "
                    f"{'/'.join(sorted(stated))}")
    return None


def _undergoer_conflict(claim: Clause, theirs: tuple[Clause, ...]) -> str | None:
    """The sentence states the claim's act, by the same doer or none named, done to another party."""
    return _party_conflict(claim, theirs, lambda c: c.patients, lambda c, e: _same(c.predicate, e.predicate),
                           "who undergoes '{}'")


TRANSFERS = frozenset("send submit provide give deliver forward transmit report furnish file mail email return "
                      "communicate direct address".split())
"""Verbs that move something to a party: a restatement may use another of them ("send" for "submit"), never another
recipient."""


def _moves_the_same(claim: Clause, other: Clause) -> bool:
    """Both clauses send the same thing (or one does not say what), with one verb or two of ``TRANSFERS``."""
    verbs = _same(claim.predicate, other.predicate) or {claim.predicate, other.predicate} <= TRANSFERS
    return verbs and (not claim.patients or not other.patients or _shares(claim.patients, other.patients))


def _recipient_conflict(claim: Clause, theirs: tuple[Clause, ...]) -> str | None:
    """The sentence sends what the claim sends, by the same doer or none named, to another party: "send the
    applicant the notification" against "submit the notification to FDA"."""
    return _party_conflict(claim, theirs, lambda c: c.recipients, _moves_the_same, "to whom '{}' goes")


def _as_document(clause: Clause, names: frozenset[str]) -> Clause:
    """A doer that is the document itself, as one party on both sides: "PI 044-1 applies" (the claim names the
    sentence's document) and "This document applies" (the sentence names itself)."""
    if not clause.agents & names:
        return clause
    return replace(clause, agents=frozenset(_DOCUMENT if a in names else a for a in clause.agents))


def structural_conflict(claim: str, sentence: str, authority: str = "",
                        document: frozenset[str] = frozenset()) -> str | None:
    """The first clause of the claim that the sentence states with another doer or the opposite polarity.
    ``document``: the claim's words that name the sentence's own document (``documents.mentions``); a doer among them
    is the same party as a doer the sentence calls "this document/guidance/part…"."""
    theirs = clauses(sentence, authority)
    mine_all = clauses(claim, authority)
    if document:
        theirs = tuple(_as_document(e, SELF_NOUNS) for e in theirs)
        mine_all = tuple(_as_document(c, document) for c in mine_all)
    for mine in mine_all:
        aligned = [e for e in theirs if _about_the_same(mine, e)]
        found = (_actor_conflict(mine, aligned) or _polarity_conflict(mine, aligned)
                 or _undergoer_conflict(mine, theirs) or _recipient_conflict(mine, theirs))
        if found:
            return found
    return None


def participants(claim: str, authority: str = "") -> set[str]:
    """Stems of who and what the claim is about (its clauses' doers and subjects), which no restatement may drop."""
    return {stem(p) for c in clauses(claim, authority) for p in c.subjects}
