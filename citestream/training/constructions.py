"""Claims built from corpus sentences by construction, for the cross-encoder's ``claims`` source.

A sentence supports its own claim, lightly restated (1). The same claim with its polarity flipped ("is considered"
/ "is not considered", "need not" / "must", "not required" / "required"), its actor swapped (the party that does
the verb replaced by another: the applicant for FDA, the investigator for the sponsor), a number or unit changed,
or a restrictor changed ("at least" / "no more than", "only" added) does not (0). Why: each keeps nearly every
word of the sentence, so a model that learnt support from paraphrases alone scores them as support; these teach
it that who, whether and how much decide. Deterministic for the seed (the parse is deterministic too).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from ..core.clauses import agent_spans
from .corpus import CorpusChunk, informative
from .pairs import changed_number

SEED = 20261127
SENTENCES = 900
PARTY_SENTENCES = 400
"""Sentences that name a party, drawn besides the others for actor swaps: few random sentences name one."""
PARTIES = ("FDA", "the applicant", "the sponsor", "the investigator", "the manufacturer", "the holder", "the IRB",
           "the reviewer", "the Agency", "the firm")
"""The parties of regulatory text; a swapped actor is one of them put where another (or any doer) was."""
_PARTY_HEADS = {p.split()[-1].lower() for p in PARTIES}

_FLIPS: tuple[tuple[str, str], ...] = (
    (r"\b(is|are|was|were|be) not (considered|required|recommended|necessary|expected|permitted|allowed)\b", r"\1 \2"),
    (r"\b(is|are|was|were|be) (considered|required|recommended|necessary|expected|permitted|allowed)\b", r"\1 not \2"),
    (r"\bneed not\b", "must"), (r"\bdoes not need to\b", "must"), (r"\bno longer\b", "still"),
    (r"\b(does|do) not (\w+)", r"\2"),
    (r"\b(must|should|may|will|would|could) not\b", r"\1"), (r"\bcannot\b", "can"),
    (r"\bnot necessary\b", "necessary"), (r"\bnot required\b", "required"),
    (r"\b(must|should|may|will)\b", r"\1 not"), (r"\bcan\b", "cannot"),
    (r"\bis\b", "is not"), (r"\bare\b", "are not"),
)
_UNITS = ("days", "weeks", "months", "years", "hours", "minutes")
_QUANTITY = re.compile(r"(?<![\w.(])\d+(?:\.\d+)?(?![\w)]|\.\w)")
"""A number stated as a quantity: not part of a section reference ("314.50(d)") or a word ("Q8")."""
_COMPARATORS = (("at least", "no more than"), ("no more than", "at least"), ("not more than", "at least"),
                ("no less than", "no more than"), ("not less than", "no more than"), ("up to", "at least"),
                ("within", "after"), ("more than", "less than"), ("less than", "more than"))


def flipped_polarity(sentence: str) -> str | None:
    for pattern, replacement in _FLIPS:
        if re.search(pattern, sentence):
            return re.sub(pattern, replacement, sentence, count=1)
    return None


def swapped_actor(sentence: str, rng: random.Random) -> str | None:
    """The party doing one clause's verb replaced by another: the sentence's other party when it names two."""
    named = [s for s in agent_spans(sentence) if s[2] in _PARTY_HEADS]
    if not named:
        return None
    start, end, head = rng.choice(named)
    others = [p for p in PARTIES if p.split()[-1].lower() != head]
    in_sentence = [p for p in others if re.search(rf"\b{re.escape(p.split()[-1])}\b", sentence, re.IGNORECASE)]
    party = rng.choice(in_sentence or others)
    if start == 0:
        party = party[:1].upper() + party[1:]
    return sentence[:start] + party + sentence[end:]


def changed_quantity(sentence: str, rng: random.Random) -> str | None:
    """A number changed, or its unit ("30 days" → "30 months")."""
    units = list(re.finditer(rf"\b(\d+)(\s*-?\s*)({'|'.join(_UNITS)})\b", sentence))
    if units and rng.random() < 0.4:
        m = rng.choice(units)
        unit = rng.choice([u for u in _UNITS if u != m.group(3)])
        return sentence[:m.start(3)] + unit + sentence[m.end(3):]
    return changed_number(sentence, rng, _QUANTITY)


def changed_restrictor(sentence: str, _rng: random.Random) -> str | None:
    """A comparator turned around ("at least" → "no more than"), or "only" put before the object."""
    for old, new in _COMPARATORS:
        if re.search(rf"\b{old}\b", sentence, re.IGNORECASE):
            return re.sub(rf"\b{old}\b", new, sentence, count=1, flags=re.IGNORECASE)
    m = re.search(r"\b(includes?|covers?|applies to|require[sd]?|submit|use[sd]?) (the |a |an )?", sentence)
    if not m:
        return None
    return sentence[:m.end(1)] + " only" + sentence[m.end(1):]


def restated(sentence: str) -> str:
    """The claim a sentence makes: without parentheses, footnote marks and the final full stop."""
    text = re.sub(r"\s*\([^)]{0,80}\)", "", sentence)
    text = re.sub(r"(?<=[a-z.])\d{1,3}(?=\s|$)", "", text)
    return " ".join(text.split()).rstrip(" .;:")


CONSTRUCTIONS: tuple[tuple[str, Callable[[str, random.Random], str | None]], ...] = (
    ("polarity", lambda s, _rng: flipped_polarity(s)),
    ("actor", swapped_actor),
    ("quantity", changed_quantity),
    ("restrictor", changed_restrictor),
)


def constructed_claims(chunks: Sequence[CorpusChunk], seed: int = SEED) -> list[tuple[str, str, int, str, str]]:
    """(claim, sentence, label, construction, pdf): for ``SENTENCES`` sampled corpus sentences the restated sentence
    (1, construction "restated") and each construction that applies to it (0); for ``PARTY_SENTENCES`` more that
    name a party, the restated sentence and its actor swapped."""
    rng = random.Random(seed)
    units = sorted({(u, c.pdf) for c in chunks for u in c.units if informative(u, 8, 40)})
    drawn = rng.sample(units, min(SENTENCES, len(units)))
    party = re.compile(rf"\b(?:{'|'.join(sorted(_PARTY_HEADS))})\b", re.IGNORECASE)
    rest = [u for u in units if party.search(u[0]) and u not in set(drawn)]
    more = rng.sample(rest, min(PARTY_SENTENCES, len(rest)))
    out = []
    for (unit, pdf), constructions in [(u, CONSTRUCTIONS) for u in drawn] + [(u, CONSTRUCTIONS[1:2]) for u in more]:
        claim = restated(unit)
        out.append((claim, unit, 1, "restated", pdf))
        for name, build in constructions:
            wrong = build(claim, rng)
            if wrong and wrong != claim:
                out.append((wrong, unit, 0, name, pdf))
    return out
