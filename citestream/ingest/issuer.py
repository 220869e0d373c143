"""Who issued a document, and the contract scope that follows: the operator's word > a record's claim > what the
document says of itself (its first pages, then its metadata, then its file name) > unknown (MIXED, reported).

The operator speaks through the command line (``--issuer``, ``--authority``) and through ``manifest.json`` beside the
PDFs (``issuer`` and/or ``authority`` per file); a ``documents.ingest`` record's ``issuer`` or ``authority`` is a
publisher's claim and counts only where the operator said nothing. The document is read with the gazetteer of
regulators (``core.regulators``): the issuer named earliest on the first two pages, ICH and "Standard Operating
Procedure" before the others (a regulator republishes ICH guidelines under its own cover; a firm's SOP names the
regulator it follows). Two issuers named on the first page, neither before the other by that rule, is reported:
the first named is taken and the other is named, so the operator can correct it.

An upload's text and name are the uploader's: it is read for its issuer (shown, and correctable by the uploader) but
its scope stays MIXED unless the operator's manifest names it; anyone can write "Food and Drug Administration" on a
first page. The one exception is a firm's own SOP read from its first pages: it goes to SOPS, the scope of the
firm's own procedures, which speaks for no regulator (docs/security.md, point 10). A named body standing on a line of
its own on the first page ("World Health Organization") issued the document even when it is titled "Standard
Operating Procedure" (``_publisher_line``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.bounds import scanned
from ..core.regulators import BY_NAME, EITHER, FILE_WORDS, MARKS, REGULATORS, SHORT, canonical, scope_of

AUTHORITIES = ("FDA", "EMA", "ICH", "SOPS")
_ICH_CODE = re.compile(r"(?:^|[^A-Za-z])(?:Q\d{1,2}|E\d{1,2}|M\d{1,2}|S\d{1,2})(?:[^A-Za-z0-9]|R\d|$)", re.I)
_FDA_FILE = re.compile(r"(?:^|[^A-Za-z])(?:ANDA|NDA|BLA|IND|CPG|guidance)(?:[^A-Za-z]|$)", re.I)
_META_FIELDS = ("Author", "Title", "Subject", "Keywords")


@dataclass(frozen=True)
class Reading:
    """What a document says of its issuer: the issuer ("" when it names none), where that was read, the words read,
    and the other issuers its first page names."""

    issuer: str = ""
    source: str = "unknown"  # first-page | metadata | file-name | unknown
    evidence: str = ""
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class IssuerDecision:
    issuer: str  # a gazetteer name, or "" (unknown)
    authority: str  # FDA | EMA | ICH | SOPS | MIXED: the scope the document is searched in
    source: str  # given | manifest | request | uploader | first-page | metadata | file-name | unknown
    evidence: str = ""  # the words the issuer was read from, when it was read
    also: tuple[str, ...] = ()  # other issuers the first page names
    read: Reading = Reading()  # what the document says, whatever decided

    def warnings(self) -> list[str]:
        """What a reader of the ingest log should check: an unknown issuer, two issuers named, or an operator's word
        that the document contradicts."""
        out = []
        if not self.issuer:
            out.append("issuer unknown: stored as MIXED (searchable in MIXED scope)")
        if self.also and self.source == self.read.source:
            out.append(f"names {' and '.join((self.issuer, *self.also))} as its issuer; took {self.issuer}, named "
                       "first")
        if self.read.issuer and self.issuer and self.read.issuer != self.issuer and self.source in ("given",
                                                                                                     "manifest"):
            out.append(f"the {self.source} issuer {self.issuer} differs from the document's own "
                       f"({self.read.issuer}, {self.read.source}: {self.read.evidence!r})")
        return out


MANIFEST_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Listed:
    """A manifest row: the operator's issuer and/or authority for one file."""

    issuer: str | None = None
    authority: str | None = None


@lru_cache(maxsize=32)
def _manifest(folder: Path, mtime: float) -> dict[str, Listed]:
    from .paths import read_capped  # a manifest.json that is a FIFO or a device must not block ingestion

    rows = json.loads(read_capped(folder / "manifest.json", MANIFEST_MAX_BYTES).decode("utf-8"))
    out = {}
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("file"), str):
            issuer = canonical(str(row["issuer"])) if row.get("issuer") else None
            authority = row.get("authority") if row.get("authority") in (*AUTHORITIES, "MIXED") else None
            out[row["file"]] = Listed(issuer, authority)
    return out


def manifest_entries(folder: Path) -> dict[str, Listed]:
    """``file → Listed`` from ``manifest.json`` in ``folder`` ({} when absent or unreadable)."""
    path = folder / "manifest.json"
    try:
        return _manifest(folder.resolve(), path.stat().st_mtime)
    except Exception:  # absent, unreadable, refused or not JSON: no manifest
        return {}


def manifest_authorities(folder: Path) -> dict[str, str]:
    """``file → authority`` the operator's manifest gives (an issuer's scope when it gives only the issuer)."""
    return {f: _scoped(listed.issuer, listed.authority)[1] for f, listed in manifest_entries(folder).items()
            if listed.issuer or listed.authority}


_TITLE_WORDS = 12  # a cover's line no longer than this (a title, an issuer's name) may name its issuer by acronym


def _first_named(text: str, marks: dict[str, re.Pattern] = MARKS) -> tuple[str, int, str, list[str]] | None:
    """The issuer ``text`` names first (ICH, then SOPS, before the others), where, the words, and every issuer
    named."""
    found: dict[str, re.Match] = {}
    for name, pattern in marks.items():
        match = pattern.search(text)
        if match:
            found[name] = match
    if not found:
        return None
    ahead = [r.name for r in REGULATORS if r.first and r.name in found]
    chosen = ahead[0] if ahead else min(found, key=lambda n: found[n].start())
    return chosen, found[chosen].start(), " ".join(found[chosen].group(0).split()), list(found)


def read_issuer(pages: list[str], metadata: dict[str, str] | None = None, file_name: str = "") -> Reading:
    """The issuer a document names: on its first two pages by a full name or a phrase only it prints, else by an
    acronym on a short line of its first page (a cover's title), else in its metadata (author, title, subject,
    keywords), else in its file name."""
    first = scanned(pages[0] if pages else "")  # two pages of up to 50,000 characters each: the first 50,000 read
    named = _first_named(scanned("\n".join(pages[:2])))
    if named and named[0] == "SOPS" and (body := _publisher_line(first)):
        return Reading(body[0], "first-page", body[1], tuple(n for n in named[3] if n != body[0]))
    if named:
        issuer, at, words, every = named
        return Reading(issuer, "first-page" if at < len(first) else "second-page", words,
                       _also(issuer, every, first))
    titles = "\n".join(line for line in first.splitlines() if len(line.split()) <= _TITLE_WORDS)
    named = _first_named(titles, SHORT)  # "MHRA GXP Data Integrity Guidance", not "... received FDA approval"
    if named:
        return Reading(named[0], "first-page", named[2])
    meta = "\n".join(str((metadata or {}).get(k, "")) for k in _META_FIELDS)
    named = _first_named(meta, EITHER)
    if named:
        return Reading(named[0], "metadata", named[2])
    stem = Path(file_name).stem.replace("_", " ")
    for name, pattern in FILE_WORDS.items():
        if pattern.search(stem):
            return Reading(name, "file-name", file_name)
    if _ICH_CODE.search(stem):
        return Reading("ICH", "file-name", file_name)
    if _FDA_FILE.search(stem):
        return Reading("FDA", "file-name", file_name)
    return Reading()


_PUBLISHER_EXTRA_WORDS = 4  # a line that is a body's full name and a few words more ("World Health Organization 2021")


def _publisher_line(first: str) -> tuple[str, str] | None:
    """A named body standing on a line of its own on the first page, as a publisher sets its name ("World Health
    Organization", "EUROPEAN COMMISSION", "MHRA"): it issued the document, even one titled "Standard Operating
    Procedure" (a WHO or Commission SOP template). A body named in prose, or a regulation cited on a line ("21 CFR
    Part 11"), is the rule a firm's own SOP follows and is not read here."""
    for line in first.splitlines():
        words = line.split()
        if not words or len(words) > _TITLE_WORDS:
            continue
        for name, pattern in MARKS.items():
            if BY_NAME[name].first:
                continue
            match = pattern.search(line)
            if match and len(words) - len(match.group(0).split()) <= _PUBLISHER_EXTRA_WORDS:
                return name, " ".join(match.group(0).split())
        for name, pattern in SHORT.items():
            match = pattern.search(line)
            if match and not BY_NAME[name].first and len(words) - len(match.group(0).split()) <= 1:
                return name, " ".join(match.group(0).split())
    return None


def _also(issuer: str, every: list[str], first: str) -> tuple[str, ...]:
    """The other issuers the first page names beside ``issuer`` (one of another scope, or of none); none when
    ``issuer`` is read first by rule (ICH, SOPS): the other then is its republisher or the regulator it follows."""
    if BY_NAME[issuer].first:
        return ()
    mine = BY_NAME[issuer].scope
    return tuple(n for n in every if n != issuer and not BY_NAME[n].first
                 and (mine is None or BY_NAME[n].scope != mine) and MARKS[n].search(first))


def _scoped(issuer: str | None, authority: str | None, read: str = "") -> tuple[str, str]:
    """(issuer, authority) from an issuer and/or an authority someone gave: the issuer's scope when only the issuer
    is given; the document's own issuer when only an authority is given and that issuer is in it."""
    if issuer:
        return issuer, authority or scope_of(issuer)
    assert authority is not None
    if read and scope_of(read) == authority:
        return read, authority
    return (authority if authority in BY_NAME else ""), authority


def decide_issuer(path: Path, pages: list[str], metadata: dict[str, str] | None = None, *,
                  given_issuer: str | None = None, given_authority: str | None = None,
                  claimed_issuer: str | None = None, claimed_authority: str | None = None,
                  upload: bool = False, use_manifest: bool = True) -> IssuerDecision:
    """The issuer and scope of the PDF at ``path`` (``pages``: its pages' text, ``metadata``: its document info).

    ``given_*`` are the operator's (the command line), ``claimed_*`` a record's. For an upload the claimed issuer is
    the uploader's own correction and counts above the document's text; its authority stays MIXED unless the
    operator's manifest names it. ``use_manifest=False`` reads every document itself (``--no-manifest``)."""
    read = read_issuer(pages, metadata, path.name)
    decided = read.issuer, read.source, read.evidence, read.also
    listed = manifest_entries(path.parent).get(path.name) if use_manifest else None
    if given_issuer or given_authority:
        issuer, authority = _scoped(given_issuer, given_authority, read.issuer)
        return IssuerDecision(issuer, authority, "given", read=read)
    if listed and (listed.issuer or listed.authority):
        issuer, authority = _scoped(listed.issuer, listed.authority, read.issuer)
        return IssuerDecision(issuer, authority, "manifest", read=read)
    if upload:
        if claimed_issuer:
            return IssuerDecision(claimed_issuer, "MIXED", "uploader", read=read)
        # a firm's own SOP, read from its first pages, is searched in SOPS: the scope claims no regulator's word
        own_sop = decided[0] == "SOPS" and decided[1] in ("first-page", "second-page")
        return IssuerDecision(decided[0], "SOPS" if own_sop else "MIXED", decided[1], decided[2], decided[3], read)
    if claimed_issuer or claimed_authority:
        issuer, authority = _scoped(claimed_issuer, claimed_authority, read.issuer)
        return IssuerDecision(issuer, authority, "request", read=read)
    return IssuerDecision(decided[0], scope_of(decided[0]), decided[1], decided[2], decided[3], read)
