"""The envelope every record on every topic shares."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, UTC
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from ..core.regulators import canonical
from .limits import MAX_CARRIED_SCORES, MAX_INPUT_TRACE_STAGES, MAX_NAME_CHARS, MAX_TEXT_CHARS, MAX_TRACE_STAGES

RequestId = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:\-]+$")]
Name = Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)]
"""A version, model or stage name: short text."""
Scope = Literal["MIXED", "FDA", "EMA", "ICH", "SOPS"]
Authority = Literal["FDA", "EMA", "ICH", "SOPS", "MIXED"]


def _issuer(value: str) -> str:
    found = canonical(value)
    if found is None:
        raise ValueError(f"{value!r} is no issuer of the gazetteer (citestream.core.regulators)")
    return found


Issuer = Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS), AfterValidator(_issuer)]
"""A regulator of the gazetteer (``core.regulators``), any spelling of its name ("pics" for "PIC/S")."""

SCHEMA_VERSION = "1"


def utcnow() -> datetime:
    return datetime.now(UTC)


class Contract(BaseModel):
    """Strict base: unknown fields are a contract break, not something to ignore; no string is unbounded."""

    model_config = ConfigDict(extra="forbid", frozen=False, str_strip_whitespace=False,
                              str_max_length=MAX_TEXT_CHARS)


NoAnswerCode = Literal[
    "WRONG_AUTHORITY",   # the question asks about a regulator whose documents are not indexed (or out of scope)
    "NOT_RELEVANT",      # no candidate passage reached the relevance backstop
    "NOT_ANSWERING",     # relevant passages, but no sentence the model judges to answer the question
    "FALSE_PREMISE",     # the question assumes something the documents contradict or do not state
]


class NoAnswer(Contract):
    """Why a question on its way to `answers` will be refused, decided before generation; carried to the answer."""

    code: NoAnswerCode
    detail: str = Field(max_length=1000)


AskedSlot = Literal["duration", "frequency", "percentage", "count", "temperature", "money", "date", "quantity", "actor",
                    "yes_no", "list", "definition", "requirement", "open"]
"""What a question asks for (``core.slots``): a value of a kind an answer sentence must hold, or a statement."""


class QuestionReading(Contract):
    """How retrieve read the question: ``asked`` is what every relevance decision after it scores (rerank, backstop,
    Phase B, sentence choice, R5), and the other fields say how it got there. Carried to the answer."""

    asked: str = Field(min_length=1, description="The asking sentence(s), spelt as the documents spell them, "
                                                 "acronyms written out as 'long form (SHORT)'; after the "
                                                 "background when a background judge reads it (qa-v3.3)")
    background: str = Field("", description="The sentences around the asking one (the asker's situation)")
    corrected: list[str] = Field(default_factory=list, max_length=64, description="Typos read as corpus words")
    spelled_out: list[str] = Field(default_factory=list, max_length=64, description="Acronyms written out")
    slot: AskedSlot = Field("open", description="What it asks for: an answer sentence must hold a value of that kind")
    premises: list[str] = Field(default_factory=list, max_length=16,
                                description="What it takes for granted, checked like claims before any answer")

    def asking(self) -> str:
        """The asking sentence(s) alone: what a question asks for (its slots, its parts) is read from them, not from
        the background that ``asked`` may lead with."""
        lead = f"{self.background} "
        return self.asked[len(lead):] if self.background and self.asked.startswith(lead) else self.asked

    def read_whole(self) -> bool:
        """Whether the judges score the background with the asking sentence (the background judge read it)."""
        return self.asked != self.asking()


def reading_key(text: str) -> str:
    """A sentence reading's key in ``SentenceScores``: 16 hex digits of its BLAKE2b, so a record carries the scores
    and not a second copy of its evidence."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


ReadingKey = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{16}$")]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]


class SentenceScores(Contract):
    """The relevance model's scores of a question's evidence sentences (each reading, ``text_units.scored_units``,
    keyed by ``reading_key``) for the question as read (``asked``), before any bonus. Retrieve computes them and the
    question's records carry them, so generate's sentence choice and validate's R5 read them instead of scoring the
    same sentences again, in whichever worker they run; a reading a later stage scores is added. Scores of another
    model or another reading of the question are not used."""

    model: Name = Field(min_length=1)
    asked: str = Field(min_length=1)
    scores: dict[ReadingKey, Probability] = Field(default_factory=dict, max_length=MAX_CARRIED_SCORES)


class StageTiming(Contract):
    stage: str = Field(max_length=MAX_NAME_CHARS)
    started_at: datetime
    elapsed_ms: float = Field(ge=0)


class Envelope(Contract):
    """Carried by every record: the Kafka key, the versions it was made under, and where it has been.

    ``policy_version`` may be empty on a record from outside (the worker stamps its own); the records the worker
    writes between its stages require it (:class:`StampedEnvelope`).
    """

    request_id: RequestId
    schema_version: str = Field(SCHEMA_VERSION, max_length=MAX_NAME_CHARS)
    policy_version: str | None = Field(None, max_length=MAX_NAME_CHARS)
    index_version: str | None = Field(None, max_length=MAX_NAME_CHARS)
    trace: list[StageTiming] = Field(default_factory=list, max_length=MAX_TRACE_STAGES)

    def carry(self, **overrides: Any) -> dict[str, Any]:
        """Envelope fields to copy into the next stage's record."""
        base = {
            "request_id": self.request_id,
            "policy_version": self.policy_version,
            "index_version": self.index_version,
            "trace": list(self.trace),
        }
        base.update(overrides)
        return base


class StampedEnvelope(Envelope):
    """An envelope whose ``policy_version`` is required (same field, same place: only its type narrows)."""

    policy_version: str = Field(max_length=MAX_NAME_CHARS)


class Sealed(Contract):
    """A record a worker writes: ``mac`` authenticates every other field (``citestream.sealing``). A stage reading
    a topic of a sealed model refuses a record whose seal does not hold (PROVENANCE_MISMATCH); so do the page and
    the clients."""

    mac: str | None = Field(None, pattern=r"^[0-9a-f]{128}$",
                            description="Ed25519 signature of the record's canonical JSON without this field, under "
                                        "the worker's private key (the name is from when it was an HMAC)")


InputTrace = Annotated[list[StageTiming], Field(max_length=MAX_INPUT_TRACE_STAGES)]
"""The trace a publisher may send on an input topic: short, so every stage after it still fits the bound."""


Digest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class Asked(Protocol):
    """A request that can say what it asked: the fields its result depends on, as JSON values."""

    def asked(self) -> dict[str, Any]: ...


def request_digest(request: Asked) -> str:
    """sha256 (hex) of the canonical JSON of what ``request`` asked (keys sorted, no spaces, UTF-8). The worker
    seals it into the result and a consumer computes it from the request it sent: equal, the result answers that
    request, not another one published under the same request id (review54b, N-M2)."""
    text = json.dumps(request.asked(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class BoundToRequest(Contract):
    """A sealed result that names what it answers, since the seal covers the body and not the Kafka key."""

    request_digest: Digest | None = Field(
        None, description="request_digest() of the request this result answers (citestream.models.request_digest): "
                          "sha256 of the canonical JSON of what was asked; compare it with your own request's")
