"""Whose rules a question asks about: the authorities it names, and the scope they imply.

qa-contract-v1 scopes a question to one authority (``MIXED | FDA | EMA | ICH | SOPS``). A publisher that left
``MIXED`` may still ask about one authority in the question itself ("What does Health Canada require ...");
such a question is answered only from that authority's documents, and with none indexed it is refused with that
reason: another regulator's text answering for it would be a wrong answer, however on-topic.

The table below is a gazetteer of drug regulators and their usual names, not a list of known questions.
A jurisdiction word alone ("a drug approved in Canada") does not make the question about that jurisdiction's
rules; only a regulator's name, or a jurisdiction used as the rule-maker ("EU GMP", "under UK law",
"European regulations"), does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

def _rules(*adjectives: str) -> str:
    """A jurisdiction used as the rule-maker: "Canadian regulations", "Japanese guidelines"."""
    return (rf"\b(?:{'|'.join(adjectives)})(?:'s)? (?:law|laws|rules|regulations?|requirements?|guidelines?"
            r"|guidance|directives?|legislation|authorit(?:y|ies)|regulators?|GMP)\b")


# A guideline code names ICH ("Q9", "Q8(R2)"), but not FDA's formulation sameness "Q1/Q2" (the lookbehind and the
# required space or punctuation after the code).
# ICH's members and observers and a few other drug regulators, by the names people use for them.
# canonical name → (scope it maps to, or None for a regulator with no scope of its own; patterns)
_AUTHORITIES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "FDA": ("FDA", (r"\bU\.?S\.? ?FDA\b", r"\bFDA'?s?\b", r"\bFood and Drug Administration\b", r"\bCDER\b",
                    r"\bCBER\b", r"\b21 ?CFR\b")),
    "ICH": ("ICH", (r"\bICH\b", r"\bInternational (?:Council|Conference) (?:for|on) Harmoni[sz]ation\b",
                    r"(?<!/)\b(?:ICH )?Q(?:[1-9]|1[0-4])[A-E]?(?:\(R\d\))?(?= |,|\?|\.|$)")),
    "EMA": ("EMA", (r"\bEMA'?s?\b", r"\bEMEA\b", r"\bEuropean Medicines Agency\b", r"\bCHMP\b", r"\bEudraLex\b",
                    r"\bEuropean Commission\b", r"\bEU[- ]GMP\b",
                    _rules("EU", "European", "European Union"), r"\bEU annex(?:es)?\b",
                    r"\b(?:under|per|according to|in accordance with) (?:the )?(?:EU|European Union)(?:'s)?\b")),
    "MHRA": (None, (r"\bMHRA\b", r"\bMedicines and Healthcare products Regulatory Agency\b",
                    _rules("UK", "British"), r"\b(?:under|per|according to) (?:the )?UK\b")),
    "Health Canada": (None, (r"\bHealth Canada\b", _rules("Canadian"))),
    "PMDA": (None, (r"\bPMDA\b", r"\bMHLW\b", r"\bPharmaceuticals and Medical Devices Agency\b", _rules("Japanese"))),
    "TGA": (None, (r"\bTGA\b", r"\bTherapeutic Goods Administration\b", _rules("Australian"))),
    "WHO": (None, (r"\bWHO\b", r"\bWorld Health Organi[sz]ation\b")),
    "NMPA": (None, (r"\bNMPA\b", r"\bCFDA\b", r"\bNational Medical Products Administration\b", _rules("Chinese"))),
    "Swissmedic": (None, (r"\bSwissmedic\b", _rules("Swiss"))),
    "ANVISA": (None, (r"\bANVISA\b", _rules("Brazilian"))),
    "MFDS": (None, (r"\bMFDS\b", r"\bMinistry of Food and Drug Safety\b", _rules("Korean"))),
    "HSA": (None, (r"\bHealth Sciences Authority\b", _rules("Singaporean", "Singapore"))),
    "TFDA": (None, (r"\bTFDA\b", r"\bTaiwan FDA\b", _rules("Taiwanese"))),
    "TITCK": (None, (r"\bTITCK\b", r"\bTurkish Medicines\b", _rules("Turkish"))),
    "SFDA": (None, (r"\bSFDA\b", r"\bSaudi Food and Drug Authority\b", _rules("Saudi"))),
    "COFEPRIS": (None, (r"\bCOFEPRIS\b", _rules("Mexican"))),
    "SAHPRA": (None, (r"\bSAHPRA\b", _rules("South African"))),
    "EDA": (None, (r"\bEgyptian Drug Authority\b", _rules("Egyptian"))),
    "CDSCO": (None, (r"\bCDSCO\b", _rules("Indian"))),
    "Roszdravnadzor": (None, (r"\bRoszdravnadzor\b", _rules("Russian"))),
    "Medsafe": (None, (r"\bMedsafe\b", _rules("New Zealand"))),
    "ANMAT": (None, (r"\bANMAT\b", _rules("Argentine", "Argentinian"))),
    "INVIMA": (None, (r"\bINVIMA\b", _rules("Colombian"))),
    "PIC/S": (None, (r"\bPIC/?S\b",)),
}
_PATTERNS = {name: re.compile("|".join(patterns)) for name, (_, patterns) in _AUTHORITIES.items()}
SCOPE_OF = {name: scope for name, (scope, _) in _AUTHORITIES.items()}


def named_authorities(question: str) -> list[str]:
    """The regulators the question names, in table order. Case matters ("who" is not the WHO); in a question
    written all in capitals "WHO" is the word, not the organisation."""
    shouting = question.upper() == question
    return [name for name, pattern in _PATTERNS.items()
            if pattern.search(question) and not (shouting and name == "WHO")]


@dataclass(frozen=True)
class AskedScope:
    """The authorities whose documents may answer, and why."""

    authorities: tuple[str, ...] | None      # None: every authority (MIXED and nothing named)
    named: tuple[str, ...] = ()              # regulators the question names
    inferred: bool = False                   # narrowed from the question, not by the publisher
    refusal: str | None = None               # why no indexed document may answer, when none may


def asked_scope(question: str, scope: str, indexed: set[str]) -> AskedScope:
    """The publisher's scope, narrowed by the authorities the question names.

    ``indexed`` is the set of authorities with documents in the index. A question that names only regulators
    whose documents are not indexed is refused (WRONG_AUTHORITY); one naming an indexed authority is searched
    in that authority's documents only.
    """
    named = tuple(named_authorities(question))
    named_scopes = {s for n in named if (s := SCOPE_OF[n])}  # the indexed scopes of the regulators named
    if scope != "MIXED":
        outside = [n for n in named if SCOPE_OF[n] != scope]
        if named and len(outside) == len(named):
            return AskedScope((scope,), named, False,
                              f"the question asks about {', '.join(named)}, outside the requested scope {scope}")
        allowed: tuple[str, ...] = (scope,)
    elif not named:
        return AskedScope(None)
    elif not named_scopes:
        return AskedScope((), named, True, f"the question asks about {', '.join(named)}, whose documents are not "
                                           "in the index")
    else:
        allowed = tuple(sorted(named_scopes))
    if not set(allowed) & indexed:
        return AskedScope(allowed, named, scope == "MIXED",
                          f"no {' or '.join(allowed)} documents are in the index")
    return AskedScope(allowed, named, scope == "MIXED")
