"""Which authority issued a document: the operator's word > a record's claim > the rule table > MIXED (reported).

The operator speaks through the command line's ``--authority`` and through
``manifest.json`` beside the PDFs; a ``documents.ingest`` record's ``authority``
is a publisher's claim and counts only where the operator said nothing. The
rule table looks at the first page's text first (who a document says it is
from), then at the file name. ICH comes before FDA because FDA republishes ICH
guidelines with its own cover page ("Guidance for Industry ... ICH"). An
upload's text and name are the uploader's, so for uploads the rule table is
not asked (``trust_content=False``): anyone can write "Food and Drug
Administration" on a first page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.bounds import scanned

AUTHORITIES = ("FDA", "EMA", "ICH", "SOPS")

FIRST_PAGE_RULES: tuple[tuple[str, re.Pattern], ...] = (
    ("ICH", re.compile(r"International (?:Council|Conference) (?:for|on) Harmoni[sz]ation|ICH Harmoni[sz]ed|"
                       r"\bICH\b[^\n]{0,40}\bGuideline|November \d{4}\s+ICH\b|\bICH\s*$", re.I | re.M)),
    ("EMA", re.compile(r"European Medicines Agency|\bEMEA?/(?:CHMP|CVMP)|Committee for (?:Medicinal|Human) "
                       r"Products|\bCHMP\b", re.I)),
    ("SOPS", re.compile(r"Standard Operating Procedure|\bSOP[-\s]?\d", re.I)),
    ("FDA", re.compile(r"Food and Drug Administration|Department of Health and Human Services|"
                       r"Center for (?:Drug|Biologics) Evaluation|\bCDER\b|\bCBER\b|21 CFR", re.I)),
)

FILE_NAME_RULES: tuple[tuple[str, re.Pattern], ...] = (
    ("ICH", re.compile(r"(?:^|[^A-Za-z])(?:ICH|Q\d{1,2}|E\d{1,2}|M\d{1,2}|S\d{1,2})(?:[^A-Za-z0-9]|R\d|$)", re.I)),
    ("EMA", re.compile(r"(?:^|[^A-Za-z])(?:EMA|EMEA|CHMP)(?:[^A-Za-z]|$)", re.I)),
    ("SOPS", re.compile(r"(?:^|[^A-Za-z])SOPS?(?:[^A-Za-z]|$)", re.I)),
    ("FDA", re.compile(r"(?:^|[^A-Za-z])(?:FDA|CFR|ANDA|NDA|BLA|IND|CDER|CBER|CPG|guidance)(?:[^A-Za-z]|$)", re.I)),
)


@dataclass(frozen=True)
class AuthorityDecision:
    authority: str  # FDA | EMA | ICH | SOPS | MIXED
    source: str  # given | manifest | request | first-page | file-name | unknown


MANIFEST_MAX_BYTES = 1024 * 1024


@lru_cache(maxsize=32)
def _manifest(folder: Path, mtime: float) -> dict[str, str]:
    from .paths import read_capped  # a manifest.json that is a FIFO or a device must not block ingestion

    rows = json.loads(read_capped(folder / "manifest.json", MANIFEST_MAX_BYTES).decode("utf-8"))
    return {row["file"]: row.get("authority", "MIXED") for row in rows if isinstance(row, dict) and "file" in row}


def manifest_authorities(folder: Path) -> dict[str, str]:
    """``file → authority`` from ``manifest.json`` in ``folder`` ({} when absent or unreadable)."""
    path = folder / "manifest.json"
    try:
        return _manifest(folder.resolve(), path.stat().st_mtime)
    except Exception:  # absent, unreadable, refused or not JSON: no manifest
        return {}


def decide_authority(path: Path, first_page_text: str, given: str | None = None, claimed: str | None = None,
                     trust_content: bool = True) -> AuthorityDecision:
    if given:
        return AuthorityDecision(given, "given")
    listed = manifest_authorities(path.parent).get(path.name)
    if listed in AUTHORITIES:
        return AuthorityDecision(listed, "manifest")
    if claimed:
        return AuthorityDecision(claimed, "request")
    if not trust_content:
        return AuthorityDecision("MIXED", "unknown")
    first_page_text = scanned(first_page_text)  # two pages of up to 50,000 characters each: the first 50,000 read
    for authority, pattern in FIRST_PAGE_RULES:
        if pattern.search(first_page_text):
            return AuthorityDecision(authority, "first-page")
    for authority, pattern in FILE_NAME_RULES:
        if pattern.search(path.stem.replace("_", " ")):
            return AuthorityDecision(authority, "file-name")
    return AuthorityDecision("MIXED", "unknown")
