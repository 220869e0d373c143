"""Every regular expression of the package, and text made to be hard for each one.

``inventory`` finds the patterns without a list kept by hand: compiled patterns held by a module (or a class, or a
tuple, list or dict of them), and ``re.<function>(<literal>, ...)`` calls in the source. ``adversaries`` builds,
from the pattern's own parse tree, the strings a backtracking engine is slowest on: a prefix of a match that never
completes, repeated (``would it would it ...`` for ``would it.*better``), runs of each character class, and pairs
of them.
"""

from __future__ import annotations

import ast
import gc
import importlib
import itertools
import pkgutil
import re
import time
from dataclasses import dataclass
from pathlib import Path
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as sre  # type: ignore[attr-defined]

import citestream

NOT_SCANNED = ("citestream.training", "citestream.__main__")
"""Training reads the team's own files offline (``citestream scorer``); ``__main__`` runs the command line."""
POOL = "a A 1 . , - ( ) : ; / ' \" * # % $ § é ’ [ ] @ ` < > = \t \n".split(" ") + [" "]


@dataclass(frozen=True)
class Found:
    pattern: re.Pattern[str]
    where: str  # module.name, or path:line of a call


def _collect(obj: object, where: str, out: dict, depth: int = 0) -> None:
    if isinstance(obj, re.Pattern) and isinstance(obj.pattern, str):
        out.setdefault((obj.pattern, obj.flags), Found(obj, where))
    elif depth < 2 and isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            _collect(item, where, out, depth + 1)
    elif depth < 2 and isinstance(obj, dict):
        for key, value in obj.items():
            _collect(key, where, out, depth + 1)
            _collect(value, where, out, depth + 1)


def _literal_calls(root: Path, out: dict) -> list[str]:
    """``re.f("literal", ...)`` in the source; returns the calls whose pattern is built at run time."""
    built = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        if module.startswith(NOT_SCANNED):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub",
                                           "subn", "split"} and node.args):
                continue
            first = node.args[0]
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                flags = 0
                for kw in node.keywords:
                    if kw.arg == "flags" and isinstance(kw.value, ast.Attribute):
                        flags |= getattr(re, kw.value.attr)
                compiled = re.compile(first.value, flags)
                out.setdefault((compiled.pattern, compiled.flags), Found(compiled, where))
            else:
                built.append(f"{where}: {ast.unparse(node)[:120]}")
    return built


def inventory() -> tuple[list[Found], list[str]]:
    """Every pattern of the package (but ``NOT_SCANNED``), and the calls whose pattern is built at run time."""
    out: dict = {}
    for info in pkgutil.walk_packages(citestream.__path__, "citestream."):
        if info.name.startswith(NOT_SCANNED):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            _collect(obj, f"{info.name}.{name}", out)
            if isinstance(obj, type) and obj.__module__ == info.name:
                for attr, value in vars(obj).items():
                    _collect(value, f"{info.name}.{name}.{attr}", out)
    built = _literal_calls(Path(citestream.__file__).parent, out)
    return sorted(out.values(), key=lambda f: f.where), built


# --- adversarial text ---------------------------------------------------------------------------------------------

def _in_class(items: list, char: str, ignore_case: bool) -> bool:
    """Whether ``char`` is in a parsed character class (``IN`` items)."""
    negate = False
    found = False
    probe = {char, char.lower(), char.upper()} if ignore_case else {char}
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            found |= chr(arg) in probe
        elif op is C.RANGE:
            found |= any(arg[0] <= ord(c) <= arg[1] for c in probe)
        elif op is C.CATEGORY:
            test = {C.CATEGORY_DIGIT: str.isdigit, C.CATEGORY_SPACE: str.isspace,
                    C.CATEGORY_WORD: lambda c: c.isalnum() or c == "_"}
            for category, fn in test.items():
                if arg is category:
                    found |= fn(char)
            for category, fn in {C.CATEGORY_NOT_DIGIT: str.isdigit, C.CATEGORY_NOT_SPACE: str.isspace,
                                 C.CATEGORY_NOT_WORD: lambda c: c.isalnum() or c == "_"}.items():
                if arg is category:
                    found |= not fn(char)
    return found != negate


def _members(items: list, ignore_case: bool) -> list[str]:
    return [c for c in POOL if _in_class(items, c, ignore_case)][:3]


def _sample(parsed, choice: int, ignore_case: bool, times: int) -> str:
    """One string the pattern (nearly) matches: alternative ``choice`` of every branch, each repeat ``times``."""
    out = []
    for op, arg in parsed:
        if op is C.LITERAL:
            out.append(chr(arg))
        elif op is C.NOT_LITERAL:
            out.append("a" if chr(arg) != "a" else "b")
        elif op is C.ANY:
            out.append("a")
        elif op is C.IN:
            members = _members(arg, ignore_case)
            out.append(members[choice % len(members)] if members else "")
        elif op is C.BRANCH:
            branches = arg[1]
            out.append(_sample(branches[choice % len(branches)], choice, ignore_case, times))
        elif op is C.SUBPATTERN:
            out.append(_sample(arg[3], choice, ignore_case, times))
        elif op is C.ATOMIC_GROUP:
            out.append(_sample(arg, choice, ignore_case, times))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, high, body = arg
            n = max(low, min(high, times))
            out.append(_sample(body, choice, ignore_case, times) * n)
        # AT (anchors, \b), ASSERT, ASSERT_NOT, GROUPREF: no text of their own
    return "".join(out)


def adversaries(pattern: re.Pattern[str], limit: int = 160) -> list[str]:
    """Short units whose repetition is hard for ``pattern``: prefixes of its (near) matches, classes' members
    alone and in pairs. Repeat one to any length with ``fill``."""
    parsed = sre.parse(pattern.pattern, pattern.flags)
    ignore_case = bool(pattern.flags & re.IGNORECASE)
    units: dict[str, None] = {}
    for choice, times in itertools.product(range(24), (1, 2)):
        sample = _sample(parsed, choice, ignore_case, times)
        for end in range(1, min(len(sample), 40) + 1):
            units[sample[:end]] = None
            units[sample[:end] + " "] = None
    for a in POOL:
        units[a] = None
    for a, b in itertools.product(POOL[:16], repeat=2):
        units[a + b] = None
    return [u for u in units if u][:limit]


def fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def own_cpu_s(call) -> float:
    """CPU seconds of ``call()``: the thread's own time (other processes on a shared machine do not count), with no
    garbage collection during it. Why: in the full suite a collection of the long test process's heap once fell
    inside a 0.08 s measurement and made it 0.63 s (CI, 2026-11-30). No collection before it either: one costs
    ~75 ms on that heap, and ``hardest`` times ~45,000 scans (a collection each made the suite run past CI's limit)."""
    gc.disable()
    started = time.thread_time()
    try:
        call()
    finally:
        gc.enable()
    return time.thread_time() - started


REFERENCE_S = 0.010
"""The reference scan's CPU (``slowdown``) on an idle machine: 9.2-9.8 ms on the machine of 2026-12-03."""
_REFERENCE = re.compile(r"[a-z0-9]+(?:[-'.][a-z0-9]+)*")  # the package's word pattern
_REFERENCE_TEXT = fill("word. ", 250_000)


def slowdown() -> float:
    """How many times slower this machine reads text right now than an idle one (never below 1): the best of five
    scans of 250 kB of words by the word pattern, over ``REFERENCE_S``. Why: a thread's CPU time is not the machine's
    constant. On the 2-core machine of 2026-12-03 the same scan took 9.2 ms, then 16.4 ms for seconds on end while
    the other core ingested PDFs (the cores share the host's caches), and a commit whose bounds held with room in one
    CI run failed them in the next (``chunking._END`` 117 ms against 100 ms). A budget check that fails is read again
    against this, measured at that moment: a backtracking pattern costs hundreds of times its budget, not 1.7."""
    return max(1.0, min(scan_cpu_s(_REFERENCE, _REFERENCE_TEXT) for _ in range(5)) / REFERENCE_S)


def over_budget(cost_s: float, budget_s: float) -> bool:
    """``cost_s`` over ``budget_s`` even at this moment's ``slowdown`` (measured only when over the plain budget)."""
    return cost_s > budget_s and cost_s > budget_s * slowdown()


def scan_cpu_s(pattern: re.Pattern[str], text: str) -> float:
    """CPU seconds of one scan of the whole text (every match, as ``findall`` or ``sub`` make)."""
    return own_cpu_s(lambda: pattern.subn("", text))


def hardest(pattern: re.Pattern[str], probe_chars: int = 4096, keep: int = 3) -> list[tuple[float, str]]:
    """The ``keep`` units whose ``probe_chars`` of repetition took ``pattern`` longest, slowest first."""
    timed = sorted(((scan_cpu_s(pattern, fill(u, probe_chars)), u) for u in adversaries(pattern)), reverse=True)
    return timed[:keep]
