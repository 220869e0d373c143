"""What a search may read: a scope inferred from the regulators a question names (``qa.retrieve.scope``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Among:
    """The chunks of these authorities (contract scopes) and the chunks of documents these issuers issued: a
    regulator without a contract scope of its own (the MHRA, WHO, PIC/S, ...) is found by its documents' issuer."""

    authorities: tuple[str, ...] = ()
    issuers: tuple[str, ...] = ()
