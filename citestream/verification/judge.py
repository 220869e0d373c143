"""The judge interface: one claim and one GroundingPack in, one ClaimVerdict out."""

from __future__ import annotations

from typing import Protocol

from ..models.retrieval import GroundingPack
from ..models.verdicts import Claim, ClaimVerdict


class ClaimJudge(Protocol):
    name: str

    def judge(self, claim: Claim, pack: GroundingPack) -> ClaimVerdict:
        ...
