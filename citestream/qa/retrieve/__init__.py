"""Phase A retrieval (qa-contract-v1 §1): hybrid dense + lexical candidates from Postgres, RRF, MMR, floor and
fallback with its gate, query expansion, authority scope; the GroundingPack builder for the verify agent.

One module per job: ``expansion`` (the rule table), ``candidates`` (lists from Postgres, fused), ``fusion``
(RRF, MMR), ``gate`` (floor, fallback gate), ``acceptance`` (floor → MMR → fallback), ``facts`` (the
FactsRecord), ``grounding`` (the GroundingPack), ``debug_text`` (the FACTS: text contract), ``scope`` (the
scope a question names), ``reading`` and ``lexicon`` (how a question is read in the corpus' words), ``warm``
(what the first question would otherwise wait for).
"""

from .debug_text import format_facts
from .expansion import EXPANSION_RULES, ExpansionRule, expand_query
from .gate import pdf_name_matches
from .grounding import clamp_top_k, grounding_pack
from .facts import find_facts, held_back, search_chunks
from .lexicon import corpus_lexicon
from .reading import QuestionReader
from .warm import warm

__all__ = ["EXPANSION_RULES", "ExpansionRule", "QuestionReader", "clamp_top_k", "corpus_lexicon", "expand_query",
           "format_facts", "grounding_pack", "held_back", "pdf_name_matches", "find_facts", "search_chunks", "warm"]
