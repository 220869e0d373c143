"""Generation: the prompt through the R3 execution wrapper, one audit-ledger row per prompt sent to a model.

``generation`` holds the stage function (``generate``) and the ledger row's payload.
"""

from .generation import generate, ledger_payload

__all__ = ["generate", "ledger_payload"]
