"""`qa.prompts`: answer-assembly-contract R2 — the AnswerBundle and the frozen prompt built from it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .common import Contract, Envelope, Scope


class RetrievalResult(Contract):
    """R2.0A: one row of the retrieval_bundle the assembler accepts."""

    chunk_id: str
    knowledge_id: str
    chunk_text: str
    rank: int
    similarity_score: float
    pdf: str
    page: int


class SelectedEvidence(Contract):
    chunk_id: str
    knowledge_id: str
    rank: int
    similarity_score: float
    citation_anchor: str = Field(pattern=r"^C\d+$")
    sanitized_text: str
    pdf: str
    page: int = Field(ge=1)

    @property
    def source(self) -> str:
        return f"{self.pdf}#page={self.page}"


class DropRecord(Contract):
    chunk_id: str
    code: Literal[
        "DROP_DUP", "DROP_BUDGET", "DROP_PER_KNOWLEDGE_CAP", "DROP_EMPTY_AFTER_SANITIZE",
        "DROP_BELOW_SIMILARITY_FLOOR", "DROP_MAX_CHUNKS", "DROP_CHUNK_TOKEN_CAP",
    ]


class AssemblyMetrics(Contract):
    retrieved_k: int
    selected_k: int
    dedup_dropped_count: int = 0
    budget_dropped_count: int = 0
    per_knowledge_cap_dropped_count: int = 0
    empty_dropped_count: int = 0
    below_floor_dropped_count: int = 0
    evidence_token_count: int = 0
    truncation_applied: bool = False
    drops: list[DropRecord] = Field(default_factory=list)


class AssemblyTrace(Contract):
    index_version: str
    policy_version: str
    embedding_model: str
    tokenizer: str
    retrieval_top_k: int
    thresholds: dict[str, float]


class AnswerBundle(Contract):
    """R2.0B. Hard fails: OK without evidence_block_text or without an anchor for every selected chunk."""

    request_id: str
    assembly_status: Literal["OK", "NO_EVIDENCE", "FAILED"]
    selected_evidence: list[SelectedEvidence] = Field(default_factory=list)
    evidence_block_text: str = ""
    anchor_map: dict[str, str] = Field(default_factory=dict, description="C{n} -> chunk_id")
    trace: AssemblyTrace
    assembly_metrics: AssemblyMetrics
    failure_reason: str | None = None

    @model_validator(mode="after")
    def _ok_is_complete(self) -> "AnswerBundle":
        if self.assembly_status == "OK":
            if not self.evidence_block_text or not self.selected_evidence:
                raise ValueError("assembly_status OK requires selected evidence and evidence_block_text")
            anchors = {e.citation_anchor: e.chunk_id for e in self.selected_evidence}
            if anchors != self.anchor_map:
                raise ValueError("anchor_map must map every selected chunk's anchor to its chunk_id")
            expected = [f"C{i}" for i in range(len(self.selected_evidence))]
            if [e.citation_anchor for e in self.selected_evidence] != expected:
                raise ValueError("anchors must be C0.. in evidence order")
        return self

    def evidence_for(self, anchor: str) -> SelectedEvidence | None:
        return next((e for e in self.selected_evidence if e.citation_anchor == anchor), None)


class PromptTokens(Contract):
    system_tokens: int = 0
    safety_tokens: int = 0
    evidence_tokens: int = 0
    question_tokens: int = 0
    reserved_output_tokens: int = 0
    total_prompt_tokens: int = 0


class PromptBuildResult(Contract):
    build_status: Literal["OK", "NO_EVIDENCE", "FAILED"]
    template_version: str
    prompt_text: str = ""
    prompt_sha256: str | None = None
    tokens: PromptTokens = Field(default_factory=PromptTokens)
    failure_reason: str | None = None


class PromptRecord(Envelope):
    """Key: ``request_id``. What the generate agent needs: the bundle and the exact prompt bytes."""

    question: str
    scope: Scope
    answer_bundle: AnswerBundle
    prompt: PromptBuildResult
    fallback_used: bool = False
