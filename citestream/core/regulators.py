"""A gazetteer of drug regulators: how a question names one, how a document names the one that issued it, and the
contract scope (``FDA | EMA | ICH | SOPS``) its documents belong to.

One table serves both sides, so a regulator a document can be read as issued by is one a question can name. The
contract's scope enum has four names; every other regulator (the MHRA, WHO, PIC/S, Health Canada, ...) has no scope
of its own: its documents are ``MIXED`` and are found by their ``issuer`` (docs/retrieval.md, "Scope").

``asked`` patterns are case-sensitive ("who" is not the WHO). ``marks`` are how a publisher names itself on a cover:
full names in any case (covers are often set in capitals) and phrases only it prints ("ICH HARMONISED GUIDELINE",
"EMA/CHMP/..."). ``short`` are its acronyms as written: weaker, since prose mentions them ("received FDA approval"),
they count in a cover's short lines and in the PDF's metadata only (``ingest.issuer``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _rules(*adjectives: str) -> str:
    """A jurisdiction used as the rule-maker: "Canadian regulations", "Japanese guidelines"."""
    return (rf"\b(?:{'|'.join(adjectives)})(?:'s)? (?:law|laws|rules|regulations?|requirements?|guidelines?"
            r"|guidance|directives?|legislation|authorit(?:y|ies)|regulators?|GMP)\b")


def _name(*words: str) -> str:
    """A full name, in any case, any spacing, ``and`` or ``&`` alike: covers print "FOOD AND DRUG ADMINISTRATION"."""
    return "(?i:" + "|".join(r"\b" + re.sub(r"\\? ", r"\\s+", w).replace(r"\s+and\s+", r"\s+(?:and|&)\s+") + r"\b"
                             for w in words) + ")"


@dataclass(frozen=True)
class Regulator:
    name: str                   # canonical: what ``documents.issuer`` holds and a refusal names
    scope: str | None           # the contract scope of its documents; None: MIXED, found by issuer
    asked: tuple[str, ...]      # how a question names it
    marks: tuple[str, ...] = ()  # how a document names it as its issuer
    first: bool = False         # read before the others (see ``REGULATORS``)
    file_words: tuple[str, ...] = ()  # its names in a file name (any case, between non-letters)
    short: tuple[str, ...] = ()  # its acronyms, as a cover's title line or the metadata writes them


# ICH first: a regulator republishes ICH guidelines under its own cover ("Guidance for Industry ... ICH"), and the
# guideline stays ICH's. "Standard Operating Procedure" next: a firm's SOP names the regulator whose rules it follows.
REGULATORS: tuple[Regulator, ...] = (
    Regulator("ICH", "ICH", (r"\bICH\b", r"\bInternational (?:Council|Conference) (?:for|on) Harmoni[sz]ation\b",
                             # a guideline code ("Q9", "Q8(R2)"), not FDA's formulation sameness "Q1/Q2"
                             r"(?<!/)\b(?:ICH )?Q(?:[1-9]|1[0-4])[A-E]?(?:\(R\d\))?(?= |,|\?|\.|$)"),
              (_name("International Council for Harmonisation", "International Council for Harmonization",
                     "International Conference on Harmonisation", "International Conference on Harmonization"),
               r"(?i:\bICH Harmoni[sz]ed\b)", r"\bICH\b[^\n]{0,40}(?i:\bGuideline)", r"(?m:\b\d{4}\s+ICH\b|\bICH\s*$)"),
              first=True, file_words=("ich",), short=(r"\bICH\b",)),
    Regulator("SOPS", "SOPS", (), (_name("Standard Operating Procedure"), r"\bSOP[-\s]?\d"), first=True,
              file_words=("sop", "sops")),
    Regulator("FDA", "FDA", (r"\bU\.?S\.? ?FDA\b", r"\bFDA'?s?\b", r"\bFood and Drug Administration\b", r"\bCDER\b",
                             r"\bCBER\b", r"\b21 ?CFR\b"),
              (_name("Food and Drug Administration", "Department of Health and Human Services",
                     "Center for Drug Evaluation and Research", "Center for Biologics Evaluation and Research",
                     "Center for Devices and Radiological Health", "21 Code of Federal Regulations"),),
              file_words=("fda", "cfr", "cder", "cber", "cdrh"), short=(r"\b(?:FDA|CDER|CBER|CDRH)\b", r"\b21 CFR\b")),
    Regulator("EMA", "EMA", (r"\bEMA'?s?\b", r"\bEMEA\b", r"\bEuropean Medicines Agency\b", r"\bCHMP\b",
                             r"\bEudraLex\b", r"\bEuropean Commission\b", r"\bEU[- ]GMP\b",
                             _rules("EU", "European", "European Union"), r"\bEU annex(?:es)?\b",
                             r"\b(?:under|per|according to|in accordance with) (?:the )?(?:EU|European Union)"
                             r"(?:'s)?\b"),
              (_name("European Medicines Agency", "An agency of the European Union",
                     "Committee for Medicinal Products for Human Use"), r"\bEMEA?/(?:CHMP|CVMP)"),
              file_words=("ema", "emea", "chmp"), short=(r"\b(?:EMA|CHMP)\b",)),
    # The European Commission publishes EudraLex (EU GMP among it): EMA's scope. Questions name it under EMA.
    Regulator("European Commission", "EMA", (),
              (_name("European Commission", "Directorate-General for Health and Food Safety",
                     "Directorate General Health and Food Safety"), r"(?i:\bEudraLex\b)"),
              file_words=("eudralex",)),
    Regulator("MHRA", None, (r"\bMHRA\b", r"\bMedicines (?:and|&) Healthcare products Regulatory Agency\b",
                             _rules("UK", "British"), r"\b(?:under|per|according to) (?:the )?UK\b"),
              (_name("Medicines and Healthcare products Regulatory Agency"),), file_words=("mhra",),
              short=(r"\bMHRA\b",)),
    Regulator("Health Canada", None, (r"\bHealth Canada\b", _rules("Canadian")),
              (_name("Health Canada", "Santé Canada"),), file_words=("hc-sc",)),
    Regulator("PMDA", None, (r"\bPMDA\b", r"\bMHLW\b", r"\bPharmaceuticals and Medical Devices Agency\b",
                             _rules("Japanese")),
              (_name("Pharmaceuticals and Medical Devices Agency", "Ministry of Health, Labour and Welfare"),),
              file_words=("pmda", "mhlw"), short=(r"\b(?:PMDA|MHLW)\b",)),
    Regulator("TGA", None, (r"\bTGA\b", r"\bTherapeutic Goods Administration\b", _rules("Australian")),
              (_name("Therapeutic Goods Administration"),), file_words=("tga",), short=(r"\bTGA\b",)),
    Regulator("WHO", None, (r"\bWHO\b", r"\bWorld Health Organi[sz]ation\b"),
              (_name("World Health Organization", "World Health Organisation", "Organisation mondiale de la Santé"),
               r"\bWHO Technical Report Series\b", r"©\s*WHO\b"), file_words=("who",)),
    Regulator("NMPA", None, (r"\bNMPA\b", r"\bCFDA\b", r"\bNational Medical Products Administration\b",
                             _rules("Chinese")),
              (_name("National Medical Products Administration"),), file_words=("nmpa",), short=(r"\bNMPA\b",)),
    Regulator("Swissmedic", None, (r"\bSwissmedic\b", _rules("Swiss")),
              (_name("Swissmedic", "Swiss Agency for Therapeutic Products"),), file_words=("swissmedic",)),
    Regulator("ANVISA", None, (r"\bANVISA\b", _rules("Brazilian")),
              (_name("Agência Nacional de Vigilância Sanitária"),), file_words=("anvisa",), short=(r"\bANVISA\b",)),
    Regulator("MFDS", None, (r"\bMFDS\b", r"\bMinistry of Food and Drug Safety\b", _rules("Korean")),
              (_name("Ministry of Food and Drug Safety"),), file_words=("mfds",), short=(r"\bMFDS\b",)),
    Regulator("HSA", None, (r"\bHealth Sciences Authority\b", _rules("Singaporean", "Singapore")),
              (_name("Health Sciences Authority"),)),
    Regulator("TFDA", None, (r"\bTFDA\b", r"\bTaiwan FDA\b", _rules("Taiwanese")),
              (_name("Taiwan Food and Drug Administration"),), short=(r"\bTFDA\b",)),
    Regulator("TITCK", None, (r"\bTITCK\b", r"\bTurkish Medicines\b", _rules("Turkish")),
              (_name("Turkish Medicines and Medical Devices Agency"),), short=(r"\bTITCK\b",)),
    Regulator("SFDA", None, (r"\bSFDA\b", r"\bSaudi Food and Drug Authority\b", _rules("Saudi")),
              (_name("Saudi Food and Drug Authority"),), short=(r"\bSFDA\b",)),
    Regulator("COFEPRIS", None, (r"\bCOFEPRIS\b", _rules("Mexican")), short=(r"\bCOFEPRIS\b",)),
    Regulator("SAHPRA", None, (r"\bSAHPRA\b", _rules("South African")),
              (_name("South African Health Products Regulatory Authority"),), short=(r"\bSAHPRA\b",)),
    Regulator("EDA", None, (r"\bEgyptian Drug Authority\b", _rules("Egyptian")), (_name("Egyptian Drug Authority"),)),
    Regulator("CDSCO", None, (r"\bCDSCO\b", _rules("Indian")),
              (_name("Central Drugs Standard Control Organisation", "Central Drugs Standard Control Organization"),),
              short=(r"\bCDSCO\b",)),
    Regulator("Roszdravnadzor", None, (r"\bRoszdravnadzor\b", _rules("Russian")), (_name("Roszdravnadzor"),)),
    Regulator("Medsafe", None, (r"\bMedsafe\b", _rules("New Zealand")), (_name("Medsafe"),)),
    Regulator("ANMAT", None, (r"\bANMAT\b", _rules("Argentine", "Argentinian")), short=(r"\bANMAT\b",)),
    Regulator("INVIMA", None, (r"\bINVIMA\b", _rules("Colombian")), short=(r"\bINVIMA\b",)),
    Regulator("PIC/S", None, (r"\bPIC/?S\b",),
              (_name("Pharmaceutical Inspection Co-operation Scheme", "Pharmaceutical Inspection Cooperation Scheme",
                     "Pharmaceutical Inspection Convention"), r"©\s*PIC/S\b"), file_words=("pics", "pic-s"),
              short=(r"\bPIC/S\b",)),
)

BY_NAME: dict[str, Regulator] = {r.name: r for r in REGULATORS}
ISSUERS: tuple[str, ...] = tuple(BY_NAME)
"""Every issuer a document may carry ("" is unknown)."""
ASKED = {r.name: re.compile("|".join(r.asked)) for r in REGULATORS if r.asked}
MARKS = {r.name: re.compile("|".join(r.marks)) for r in REGULATORS if r.marks}
SHORT = {r.name: re.compile("|".join(r.short)) for r in REGULATORS if r.short}
EITHER = {r.name: re.compile("|".join(r.marks + r.short)) for r in REGULATORS if r.marks or r.short}
FILE_WORDS = {r.name: re.compile(rf"(?i)(?:^|[^a-z])(?:{'|'.join(map(re.escape, r.file_words))})(?:[^a-z]|$)")
              for r in REGULATORS if r.file_words}


def scope_of(issuer: str) -> str:
    """The contract scope of an issuer's documents: its own, or MIXED (an unknown issuer, or one with no scope)."""
    regulator = BY_NAME.get(issuer)
    return regulator.scope if regulator is not None and regulator.scope else "MIXED"


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


_CANONICAL: dict[str, str] = {}
for _regulator in REGULATORS:
    _CANONICAL.setdefault(_key(_regulator.name), _regulator.name)


def canonical(name: str) -> str | None:
    """The gazetteer's name for ``name`` (any case, "PICS" for "PIC/S"), or None when it names no regulator; one
    lookup, since the verifier asks it of every word of a claim."""
    return _CANONICAL.get(_key(name))
