"""Whose rules a question asks about: the regulators it names, and the documents that may answer it.

qa-contract-v1 scopes a question to one authority (``MIXED | FDA | EMA | ICH | SOPS``). A question may name a
regulator itself ("What does Health Canada require ..."); since policy qa-v2.8 such a question is answered from that
regulator's documents whenever any are indexed, whatever its scope field says: a regulator with a contract scope
(FDA, EMA, ICH, SOPS) by the documents of that scope, any other (the MHRA, WHO, PIC/S, ...) by the documents whose
``issuer`` it is. With none of the named regulators' documents indexed it is refused with that reason: another
regulator's text answering for it would be a wrong answer, however on-topic. A scope the question's regulators agree
with ("FDA" for a question naming FDA and ICH) is kept as it is.

The regulators are a gazetteer (``core.regulators``), not a list of known questions. A jurisdiction word alone ("a
drug approved in Canada") does not make the question about that jurisdiction's rules; only a regulator's name, or a
jurisdiction used as the rule-maker ("EU GMP", "under UK law", "European regulations"), does.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass

from ...core.regulators import ASKED, BY_NAME
from ...store.scopes import Among
from ...store.search import Scope

SCOPE_OF = {name: BY_NAME[name].scope for name in ASKED}


_SPELLED_AFTER = re.compile(r"[\"'\u201d]?\s+(?:stands?|is short|is an? (?:acronym|abbreviation)) for\b", re.IGNORECASE)
_SPELLED_BEFORE = re.compile(r"\b(?:acronym|abbreviation|abbreviated)\s+[\"'\u201c]?$", re.IGNORECASE)


def named_authorities(question: str) -> list[str]:
    """The regulators the question names, in table order. Case matters ("who" is not the WHO); in a question
    written all in capitals "WHO" is the word, not the organisation. Letters whose meaning is asked ("what does EMA
    stand for", "the abbreviation EMA") name no regulator: a document may define them otherwise (the DQST program's
    "economically motivated adulteration")."""
    shouting = question.upper() == question
    return [name for name, pattern in ASKED.items()
            if any(not _spelling_asked(question, m) for m in pattern.finditer(question))
            and not (shouting and name == "WHO")]


def _spelling_asked(question: str, found: re.Match) -> bool:
    """Whether the question asks what the letters ``found`` stand for."""
    return bool(_SPELLED_AFTER.match(question, found.end()) or _SPELLED_BEFORE.search(question[:found.start()]))


@dataclass(frozen=True)
class AskedScope:
    """The documents that may answer, and why: those of ``authorities`` (contract scopes) and those issued by
    ``issuers`` (regulators without a scope of their own)."""

    authorities: tuple[str, ...] | None      # None: every authority (MIXED and nothing named)
    named: tuple[str, ...] = ()              # regulators the question names
    inferred: bool = False                   # narrowed from the question, not by the publisher
    refusal: str | None = None               # why no indexed document may answer, when none may
    issuers: tuple[str, ...] = ()            # regulators without a scope, searched by their documents' issuer

    def searched(self, published: str) -> Scope:
        """What retrieval searches: the publisher's scope when the question narrows nothing, else these authorities
        and issuers."""
        if self.authorities is None:
            return published
        return Among(self.authorities, self.issuers) if self.issuers else self.authorities


def asked_scope(question: str, scope: str, indexed: set[str], issuers: Set[str] = frozenset()) -> AskedScope:
    """The publisher's scope, or the documents of the regulators the question names.

    ``indexed`` holds the authorities with documents in the index, ``issuers`` the issuers. A scope other than MIXED
    stands when the question names no regulator or one of that scope. Otherwise the named regulators with indexed
    documents are searched (qa-v2.8: whatever the scope said); with none, the question is refused (WRONG_AUTHORITY).
    """
    named = tuple(named_authorities(question))
    if scope != "MIXED" and (not named or any(SCOPE_OF[n] == scope for n in named)):
        if scope not in indexed:
            return AskedScope((scope,), named, False, f"no {scope} documents are in the index")
        return AskedScope((scope,), named)
    if not named:
        return AskedScope(None)
    scopes = sorted({s for n in named if (s := SCOPE_OF[n]) and s in indexed})
    by_issuer = tuple(n for n in named if SCOPE_OF[n] is None and n in issuers)
    if not scopes and not by_issuer:
        scoped = sorted({s for n in named if (s := SCOPE_OF[n])})
        missing = f"no {' or '.join(scoped)} documents are in the index" if scoped and len(scoped) == len(named) \
            else f"the question asks about {', '.join(named)}, whose documents are not in the index"
        return AskedScope(tuple(scoped), named, True, missing)
    return AskedScope(tuple(scopes), named, True, issuers=by_issuer)
