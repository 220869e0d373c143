"""The flow, declared once: which stage reads which topic, runs which function and writes which topic.

The faust agents are generated from ``FLOW`` (``streams.agents``) and the in-process path walks
``QUESTION_PATH`` (``inprocess``), so the two cannot differ. What an agent does beyond decode → run → publish
is a flag on its row, never a comparison of topic names. Each row's record types are checked against the
topic registry when this module is imported.

A question's way, read from the table::

    questions → retrieve → qa.facts → filter → qa.relevant → assemble → qa.prompts → generate
    → qa.generations → validate → answers

Beside it: documents.ingest → ingest → documents.ingested, claims.verify → verify → claims.verdicts,
compliance.requests → compliance → compliance.reports. Anything refused goes to qa.deadletter with a reason.
"""

from __future__ import annotations

import itertools
import typing
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from . import stages
from .deps import Deps
from .models import QuestionEvent
from .topics import TopicWiringError, spec


@dataclass(frozen=True)
class Step:
    """One stage of the flow: ``run(record of source's model, deps) -> record of sink's model``."""

    stage: str
    source: str
    sink: str
    run: Callable[[typing.Any, Deps], BaseModel]
    state: Callable[[typing.Any], str] | None = None
    """The request's state recorded once the output is published (question path only)."""
    admits_requests: bool = False
    """The entry of the question path: a request_id is checked (duplicate, already answered) before the stage."""
    answers: bool = False
    """Writes the question's one outcome: sent only if none was recorded yet, and awaited before it is recorded."""
    answers_on_failure: bool = False
    """A question on its way: a stage error still ends in a failure answer on ``answers``."""
    counts_fallback: bool = False
    """Counts the output's ``fallback_used`` in the fallback metric."""
    takes_together: bool = False
    """Takes up to ``questions_together`` records at once and runs them side by side: the stage where the models'
    passes are heaviest, so calls that meet are batched (``embedding.batching.Coalescer``). Each record is still
    decoded, admitted, published and recorded on its own."""

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(self.run)
        first = self.run.__code__.co_varnames[0]
        spec(self.source, hints[first])
        spec(self.sink, hints["return"])
        if self.admits_requests and self.in_model is not QuestionEvent:
            raise TopicWiringError(f"{self.stage}: only a step reading questions admits requests")

    @property
    def checks_mac(self) -> bool:
        """The source topic is one only a worker writes: a record whose MAC does not hold is refused
        (PROVENANCE_MISMATCH) before the stage sees it."""
        return spec(self.source).sealed

    @property
    def in_model(self) -> type[BaseModel]:
        return spec(self.source).value_model

    @property
    def out_model(self) -> type[BaseModel]:
        return spec(self.sink).value_model


def _state(name: str) -> Callable[[BaseModel], str]:
    return lambda _record: name


def _answer_status(answer: typing.Any) -> str:
    return answer.status


QUESTION_PATH: tuple[Step, ...] = (
    Step("retrieve", "questions", "qa.facts", stages.retrieve_facts, _state("retrieved"),
         admits_requests=True, answers_on_failure=True, counts_fallback=True, takes_together=True),
    Step("filter", "qa.facts", "qa.relevant", stages.filter_relevant, _state("filtered"), answers_on_failure=True),
    Step("assemble", "qa.relevant", "qa.prompts", stages.assemble_prompt, _state("assembled"),
         answers_on_failure=True),
    Step("generate", "qa.prompts", "qa.generations", stages.generate_answer, _state("generated"),
         answers_on_failure=True),
    Step("validate", "qa.generations", "answers", stages.validate_answer, _answer_status,
         answers=True, answers_on_failure=True),
)

FLOW: tuple[Step, ...] = (
    *QUESTION_PATH,
    Step("ingest", "documents.ingest", "documents.ingested", stages.ingest_documents),
    Step("verify", "claims.verify", "claims.verdicts", stages.verify_claim_request),
    Step("compliance", "compliance.requests", "compliance.reports", stages.report_compliance),
)


def _check(flow: tuple[Step, ...], path: tuple[Step, ...]) -> None:
    """One agent per source topic, unique stage names, a question path that chains from questions to answers, and
    every output sealed (so the next reader can tell a worker wrote it)."""
    for step in flow:
        if not spec(step.sink).sealed:
            raise TopicWiringError(f"{step.stage} writes {step.sink}, whose record is not Sealed")
    for what in ("stage", "source"):
        names = [getattr(step, what) for step in flow]
        if len(names) != len(set(names)):
            raise TopicWiringError(f"two steps share a {what}: {names}")
    for before, after in itertools.pairwise(path):
        if before.sink != after.source:
            raise TopicWiringError(f"{before.stage} writes {before.sink} but {after.stage} reads {after.source}")


_check(FLOW, QUESTION_PATH)

__all__ = ["FLOW", "QUESTION_PATH", "Step"]
