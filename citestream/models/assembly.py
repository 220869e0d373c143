"""`qa.prompts`: answer-assembly-contract R2 — the AnswerBundle and the frozen prompt built from it."""

from __future__ import annotations

import math
import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from .common import Contract, NoAnswer, QuestionReading, Scope, Sealed, SentenceScores, StampedEnvelope

MAX_HEADINGS = 16
MAX_HEADING_CHARS = 1000
_SAFE_ID = re.compile(r"^[^\s|\[\]]+$")  # ids go inside the evidence header: no spaces, bars or brackets
_SAFE_PDF = re.compile(r"^[^\x00-\x1f\x7f|\[\]#]+$")

DropCode = Literal[
    "DROP_DUP", "DROP_BUDGET", "DROP_PER_KNOWLEDGE_CAP", "DROP_EMPTY_AFTER_SANITIZE",
    "DROP_BELOW_SIMILARITY_FLOOR", "DROP_MAX_CHUNKS", "DROP_UNSAFE_STRUCTURE",
]


class RetrievalResult(Contract):
    """R2.0A: one row of the retrieval_bundle. Strict types: a rank "3" or a score "0.5" is a contract break.

    ``pdf`` and ``page`` make the evidence header's ``source`` (``<pdf>#page=<n>``).
    """

    chunk_id: str = Field(min_length=1)
    knowledge_id: str = Field(min_length=1)
    chunk_text: str
    rank: int
    similarity_score: float
    pdf: str = Field(min_length=1)
    page: int = Field(ge=1)

    @field_validator("rank", "page", mode="before")
    @classmethod
    def _integer(cls, value: object) -> object:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError("must be an integer")
        return value

    @field_validator("rank")
    @classmethod
    def _non_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError("rank starts at 0")
        return value

    @field_validator("similarity_score", mode="before")
    @classmethod
    def _number(cls, value: object) -> object:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("chunk_text", mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        if not isinstance(value, str):
            raise ValueError("chunk_text must be text, not null")
        return value

    @field_validator("chunk_id", "knowledge_id")
    @classmethod
    def _header_safe_id(cls, value: str) -> str:
        if not _SAFE_ID.match(value):
            raise ValueError("ids may not contain whitespace, '|', '[' or ']' (they go into the evidence header)")
        return value

    @field_validator("pdf")
    @classmethod
    def _header_safe_pdf(cls, value: str) -> str:
        if not _SAFE_PDF.match(value):
            raise ValueError("pdf may not contain control characters, '|', '[', ']' or '#'")
        return value


class SelectedEvidence(Contract):
    """One chunk that made it into the prompt, under its anchor. ``sanitized_text`` is what the prompt shows."""

    chunk_id: str
    knowledge_id: str
    rank: int
    similarity_score: float
    citation_anchor: str = Field(pattern=r"^C\d+$")
    sanitized_text: str = Field(min_length=1)
    pdf: str
    page: int = Field(ge=1)
    truncated: bool = Field(False, description="Cut at a sentence or word boundary by the per-chunk token cap")
    headings: list[Annotated[str, Field(max_length=MAX_HEADING_CHARS)]] = Field(
        default_factory=list, max_length=MAX_HEADINGS,
        description="The chunk's heading lines (``text_units.heading_lines``), sanitized: the prompt shows the chunk "
                    "as one line, so the units quoted from it are read with these (never rendered in the prompt)")

    @property
    def source(self) -> str:
        return f"{self.pdf}#page={self.page}"


class DropRecord(Contract):
    chunk_id: str
    code: DropCode


class AssemblyMetrics(Contract):
    """R2.2 'Selection metrics': counts per drop code, tokens, truncation."""

    retrieved_k: int
    selected_k: int
    dedup_dropped_count: int = 0
    budget_dropped_count: int = 0
    per_knowledge_cap_dropped_count: int = 0
    empty_dropped_count: int = 0
    below_floor_dropped_count: int = 0
    max_chunks_dropped_count: int = 0
    unsafe_dropped_count: int = 0
    evidence_token_count: int = 0
    chunk_token_cap: int = 0
    truncation_applied: bool = False
    truncated_chunk_ids: list[str] = Field(default_factory=list)
    drop_reason_codes: list[DropCode] = Field(default_factory=list, description="Distinct codes, sorted")
    drops: list[DropRecord] = Field(default_factory=list, description="Every drop, in the order it was decided")


class AssemblyTrace(Contract):
    """R2.0B trace fields. Nullable so a FAILED bundle can say which one was missing; OK needs all of them."""

    index_version: str | None
    policy_version: str | None
    embedding_model: str | None
    tokenizer: str | None
    retrieval_top_k: int | None
    thresholds: dict[str, float]
    selection_policy: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="The frozen SelectionPolicy values the bundle was built under")

    def missing(self) -> list[str]:
        names = ["index_version", "policy_version", "embedding_model", "tokenizer", "retrieval_top_k"]
        return [n for n in names if getattr(self, n) in (None, "")]


class AnswerBundle(Contract):
    """R2.0B. Hard fails: missing trace fields; OK without evidence_block_text or without an anchor per chunk."""

    request_id: str
    assembly_status: Literal["OK", "NO_EVIDENCE", "FAILED"]
    selected_evidence: list[SelectedEvidence] = Field(default_factory=list)
    evidence_block_text: str = ""
    evidence_block_sha256: str | None = None
    anchor_map: dict[str, str] = Field(default_factory=dict, description="C{n} -> chunk_id")
    trace: AssemblyTrace
    assembly_metrics: AssemblyMetrics
    failure_reason: str | None = None

    @model_validator(mode="after")
    def _hard_fails(self) -> AnswerBundle:
        if self.assembly_status != "FAILED" and self.trace.missing():
            raise ValueError(f"missing trace fields: {', '.join(self.trace.missing())}")
        if self.assembly_status == "OK":
            if not self.evidence_block_text or not self.selected_evidence:
                raise ValueError("assembly_status OK requires selected evidence and evidence_block_text")
            anchors = {e.citation_anchor: e.chunk_id for e in self.selected_evidence}
            if anchors != self.anchor_map:
                raise ValueError("anchor_map must map every selected chunk's anchor to its chunk_id")
            expected = [f"C{i}" for i in range(len(self.selected_evidence))]
            if [e.citation_anchor for e in self.selected_evidence] != expected:
                raise ValueError("anchors must be C0.. in evidence order")
        elif self.selected_evidence or self.evidence_block_text or self.anchor_map:
            raise ValueError(f"a {self.assembly_status} bundle carries no evidence, evidence block or anchors")
        if self.assembly_status == "FAILED" and not self.failure_reason:
            raise ValueError("a FAILED bundle says why")
        return self

    def evidence_for(self, anchor: str) -> SelectedEvidence | None:
        return next((e for e in self.selected_evidence if e.citation_anchor == anchor), None)


class PromptTokens(Contract):
    """PB3/PB4 split; ``total_prompt_tokens`` includes the reserved output tokens."""

    system_tokens: int = 0
    safety_tokens: int = 0
    evidence_tokens: int = 0
    question_tokens: int = 0
    output_format_tokens: int = 0
    reserved_output_tokens: int = 0
    total_prompt_tokens: int = 0


class PromptBuildResult(Contract):
    build_status: Literal["OK", "NO_EVIDENCE", "FAILED"]
    template_version: str
    template_sha256: str | None = None
    prompt_text: str = ""
    prompt_sha256: str | None = None
    allowed_anchors: list[str] = Field(default_factory=list, description="The [C#] markers an answer may use")
    tokens: PromptTokens = Field(default_factory=PromptTokens)
    rebuilds: int = Field(0, ge=0, description="Evidence rebuilds the final budget validation (PB4) needed")
    failure_reason: str | None = None

    @model_validator(mode="after")
    def _ok_has_prompt(self) -> PromptBuildResult:
        if self.build_status == "OK" and (not self.prompt_text or not self.prompt_sha256):
            raise ValueError("build_status OK requires prompt_text and prompt_sha256")
        if self.build_status != "OK" and (self.prompt_text or self.prompt_sha256):
            raise ValueError(f"a {self.build_status} build has an empty prompt")
        return self


class PromptRecord(StampedEnvelope, Sealed):
    """Key: ``request_id``. What the generate agent needs: the bundle and the exact prompt bytes."""

    question: str
    scope: Scope
    answer_bundle: AnswerBundle
    prompt: PromptBuildResult
    fallback_used: bool = False
    no_answer: NoAnswer | None = None
    reading: QuestionReading | None = None
    sentence_scores: SentenceScores | None = None
