"""What a question assumes: the statements it takes for granted, read from its grammar, to be verified like claims.

"Since the guidance requires X, how do we ...?" asks how, and assumes X; "Why does FDA forbid Y?" assumes FDA forbids
Y; "I've read that Z, so ..." assumes Z. A topic score answers such a question from the sentence about X, whether
or not X holds. So the assumption is stated as a claim (``premises``) and checked against the documents before any
answer: one they contradict, or do not state, refuses the question and names it.

Only grammar that asserts is read: a clause opened by "since", "given that", "because", "now that", "considering
that" (not "if", "once", "when" or "after the patent owner receives ...": those set a case, they assert nothing),
a reported belief ("I've read that ...", "we were told that ..."), and the proposition a why-question asks the
reason for. A temporal "since" ("Since 2017, how ...", "Since what date ...") is no premise.
"""

from __future__ import annotations

import re

MIN_WORDS = 4
_CLAUSE = re.compile(r"^\W*(?:since|given that|because|now that|considering that|in light of the fact that|"
                     r"as we know,?|seeing that)\s+(?P<premise>[^,;?]+?)\s*(?:,|;|\bso\b|\bthen\b)", re.IGNORECASE)
_BELIEF = re.compile(r"\b(?:i|we)(?:'ve| have)? (?:read|heard|been told|learned|understand|know|were told|was told)"
                     r"(?: somewhere)? that\s+(?P<premise>[^;?]+?)\s*(?:,\s*(?:so|and|but)\b|;|\?|\.(?:\s|$)|$)",
                     re.IGNORECASE)
_WHY = re.compile(r"^\W*why\s+(?P<aux>does|do|did|is|are|was|were|must|should|would|will|can|could|has|have|had)"
                  r"\s+(?P<rest>[^?]+)", re.IGNORECASE)
_TEMPORAL = re.compile(r"^(?:\d|what\b|which\b|when\b|then\b|then,|(?:january|february|march|april|may|june|july"
                       r"|august|september|october|november|december)\b)", re.IGNORECASE)


def premises(question: str, background: str = "") -> list[str]:
    """The statements ``question`` (and the asker's ``background``) take for granted, as claims, in order."""
    found: list[str] = []
    for text in (background, question):
        for sentence in re.split(r"(?<=[.?!])\s+", " ".join(text.split())):
            found += _premises_of(sentence)
    return list(dict.fromkeys(p for p in found if len(p.split()) >= MIN_WORDS))


def _premises_of(sentence: str) -> list[str]:
    out = []
    clause = _CLAUSE.match(sentence)
    if clause and not _TEMPORAL.match(clause["premise"]):
        out.append(clause["premise"].strip())
    out += [m["premise"].strip() for m in _BELIEF.finditer(sentence)]
    why = _WHY.match(sentence)
    if why:
        out.append(_statement(why["aux"].lower(), why["rest"].strip()))
    return out


def _statement(aux: str, rest: str) -> str:
    """The proposition a why-question asks about, its auxiliary back in place: "does FDA require X" → "FDA require
    X"; "must protocols be detailed" → "protocols must be detailed"; "was the program established" → "the program
    was established". Where the auxiliary goes back is read from the rest: before "be", or before the first
    participle; failing both it is left out (the claim judge reads stems, not agreement)."""
    if aux in ("does", "do", "did"):
        return rest
    words = rest.split()
    if aux in ("is", "are", "was", "were", "has", "have", "had"):
        at = next((i for i, w in enumerate(words) if i and re.fullmatch(r"(?<![a-z])[a-z]+(?:ed|en)", w)), None)
    else:
        at = next((i for i, w in enumerate(words) if i and w == "be"), None)
    return " ".join(words if at is None else [*words[:at], aux, *words[at:]])
