"""An LLM judge behind the same interface as the offline one, held to the same fail-closed rules.

The model answers in JSON; a reply that is not that JSON, or a backend that is
down, makes the claim ``unclear`` (LIVE mode of rag-loop-acceptance §4.3); the
reply is read as generation's is (``core.replies.parse_reply``, at most
``MAX_REPLY_CHARS``). A quote the model gives that its chunk does not hold, or
of fewer than three words, is dropped with its reference, so a ``pass`` left without evidence fails closed
(``verify_claims.fail_closed``). A ``pass`` is vetoed when the offline checks
find a stated conflict (numbers, negation, direction, roles) in the evidence it
cites.
"""

from __future__ import annotations

from ..core.bounds import MAX_REPLY_CHARS
from ..core.replies import MalformedReply, parse_reply
from ..llm import LLMBackend, LLMError, TransientLLMError
from ..models.retrieval import GroundingPack, GroundingChunk
from ..models.verdicts import Claim, ClaimVerdict, EvidenceRef
from .rule_judge import conflicts, spans
from .terms import claim_terms

PROMPT = """You verify one claim against numbered evidence chunks. Use only the evidence.
Answer with JSON only: {{"verdict": "pass" | "fail" | "unclear", "evidence": [{{"chunkId": "<chunk_id>", "quote": "<exact sentence>"}}], "rationale": "<one sentence>"}}
- "pass": the evidence states the whole claim, including every number, actor, direction and entity.
- "fail": the evidence states something that contradicts the claim.
- "unclear": the evidence does not settle it. Cite no evidence you did not read here.

### CLAIM
{claim}

### EVIDENCE
{evidence}
### END EVIDENCE
"""


def render_prompt(claim: Claim, pack: GroundingPack) -> str:
    evidence = "\n".join(f"[chunk_id={c.chunk_id}]\n{' '.join(c.text.split())}" for c in pack.chunks)
    return PROMPT.format(claim=claim.text, evidence=evidence)


def _unclear(claim: Claim, why: str) -> ClaimVerdict:
    return ClaimVerdict(claimId=claim.id, claim=claim.text, verdict="unclear", rationale=why)


class LLMJudge:
    def __init__(self, backend: LLMBackend):
        self.backend = backend
        self.name = f"llm:{backend.model_name}"

    def judge(self, claim: Claim, pack: GroundingPack) -> ClaimVerdict:
        if not pack.chunks:
            return _unclear(claim, "no grounding chunks: nothing can support the claim")
        try:
            reply = self.backend.complete(render_prompt(claim, pack))
            if len(reply.text) > MAX_REPLY_CHARS:
                return _unclear(claim, f"judge reply longer than the {MAX_REPLY_CHARS} characters read")
            data = parse_reply(reply.text)
            if not isinstance(data, dict):
                raise TypeError("not an object")
            verdict = ClaimVerdict(
                claimId=claim.id, claim=claim.text, verdict=data["verdict"],
                evidence=_quoted([EvidenceRef(chunkId=str(e["chunkId"]), quote=str(e.get("quote", "")))
                                  for e in data.get("evidence") or []], pack),
                rationale=str(data.get("rationale", ""))[:2000],
            )
        except (LLMError, TransientLLMError) as exc:
            return _unclear(claim, f"judge unavailable: {exc}")
        except (MalformedReply, ValueError, KeyError, TypeError, AttributeError) as exc:
            return _unclear(claim, f"judge reply broke its JSON contract: {type(exc).__name__}")
        if verdict.verdict == "pass":
            veto = _veto(claim, [c for c in pack.chunks if c.chunk_id in {e.chunkId for e in verdict.evidence}])
            if veto:
                return verdict.model_copy(update={"verdict": "fail", "rationale": f"offline veto: {veto}"})
        return verdict


MIN_QUOTE_WORDS = 3
"""A quote shorter than this ("the", "") is held by almost any chunk: it shows nothing."""


def _quoted(evidence: list[EvidenceRef], pack: GroundingPack) -> list[EvidenceRef]:
    """The references whose quote, of ``MIN_QUOTE_WORDS`` words or more, their chunk holds, spaces aside: a model
    may not put words in a chunk, nor pass a claim on a quote that shows nothing."""
    texts = {c.chunk_id: " ".join(c.text.split()) for c in pack.chunks}
    return [e for e in evidence if len(quote := e.quote.split()) >= MIN_QUOTE_WORDS
            and " ".join(quote) in texts.get(e.chunkId, "")]


def _veto(claim: Claim, cited: list[GroundingChunk]) -> str | None:
    terms = claim_terms(claim.text)
    for chunk in cited:
        for span in spans(chunk, terms):
            found = conflicts(claim.text, span)
            if found:
                return found
    return None
