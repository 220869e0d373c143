"""Phase B fact filtering, two modes behind one interface (qa-contract-v1 Phase B).

``fact_filter`` (the stage: ``run_filter``, ``filter_facts``), ``rule_filter`` (the local filter, the default) and
``llm_filter`` (the model's reply, held to the Phase B contract).
"""

from .fact_filter import FilterOutcome, filter_facts, run_filter
from .llm_filter import validate_relevant_facts
from .rule_filter import artifact_reason, is_artifact, similarity_key

__all__ = ["FilterOutcome", "artifact_reason", "filter_facts", "is_artifact", "run_filter", "similarity_key",
           "validate_relevant_facts"]
