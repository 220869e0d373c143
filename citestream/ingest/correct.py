"""An operator corrects a stored document's issuer (``citestream documents set-issuer``), whoever ingested or uploaded
it: the document and its chunks are relabelled in place (a new index version, nothing embedded again), and the
change is appended to the document's history in ``documents.metadata`` (who, when, from what, to what). A later
ingest of the same bytes keeps the correction unless the operator's manifest or command line says otherwise
(``pipeline.unchanged_outcome``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from ..core.regulators import ISSUERS, scope_of
from ..store import ChunkStore

CORRECTED = "operator"
"""``documents.metadata['_issuer']['source']`` of a corrected document."""
HISTORY_KEY = "_issuer_history"
MAX_HISTORY = 50
_SCOPES = ("MIXED", "FDA", "EMA", "ICH", "SOPS")


class CannotCorrect(ValueError):
    """No such document, or an issuer or scope the gazetteer does not know."""


@dataclass(frozen=True)
class Correction:
    doc_id: str
    issuer: str
    authority: str
    was_issuer: str
    was_authority: str
    at: str


def correct_issuer(store: ChunkStore, doc_id: str, issuer: str, authority: str | None = None, *, by: str = "",
                   reason: str = "") -> Correction:
    """Set ``doc_id``'s issuer (and its scope: the issuer's own unless ``authority`` is given), keeping the history."""
    if issuer not in ISSUERS:
        raise CannotCorrect(f"unknown issuer {issuer!r}: one of {', '.join(ISSUERS)}")
    if authority is not None and authority not in _SCOPES:
        raise CannotCorrect(f"unknown scope {authority!r}: one of {', '.join(_SCOPES)}")
    stored = store.labels(doc_id)
    if stored is None:
        raise CannotCorrect(f"no document {doc_id!r} in the index (`citestream documents list` shows them)")
    was_authority, was_issuer, metadata = stored
    authority = authority or scope_of(issuer)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    entry = {"at": at, "by": (by or "operator")[:100], "reason": reason[:500], "issuer": issuer,
             "authority": authority, "was_issuer": was_issuer, "was_authority": was_authority,
             "was_source": (metadata.get("_issuer") or {}).get("source", "")}
    history = [*metadata.get(HISTORY_KEY, []), entry][-MAX_HISTORY:]
    labels = {**(metadata.get("_issuer") or {}), "source": CORRECTED, "evidence": f"corrected by {entry['by']}"}
    store.relabel(doc_id, authority, issuer, {**metadata, "_issuer": labels, HISTORY_KEY: history})
    return Correction(doc_id, issuer, authority, was_issuer, was_authority, at)


def corrected(metadata: dict) -> bool:
    """Whether a stored document's issuer is an operator's correction."""
    return (metadata.get("_issuer") or {}).get("source") == CORRECTED
