"""What a question asks for, and whether a sentence holds it: a question grammar, not a list of questions.

A topic score cannot tell a sentence on the topic from one that states what was asked: "How many days after the
inspection does FDA send the report?" scores high against "FDA sends the establishment the report once the
inspection is closed", which holds no number of days. So a question's wh-phrase names the kind of value it asks for
(``asked_slot``), and an answer sentence must hold a value of that kind (``fills``); a question whose evidence holds
none is a near miss and is refused.

Kinds with a value to hold: ``duration`` (a number of days, weeks, months, years, hours or minutes), ``frequency``
(how often), ``percentage``, ``count``, ``temperature``, ``money``, ``date``, ``quantity`` (a number with any unit)
and ``actor`` (who). Kinds that any statement can answer: ``yes_no``, ``list``, ``definition``, ``requirement``
("what does X require": answered with the sentences that state requirements) and ``open``.
"""

from __future__ import annotations

import re

VALUE_KINDS = frozenset({"duration", "frequency", "percentage", "count", "temperature", "money", "date", "quantity",
                         "actor"})
KINDS = VALUE_KINDS | {"yes_no", "list", "definition", "requirement", "open"}

_TIME_UNIT = r"(?:(?:calendar|business|working)\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)"
_NUMBER_WORD = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                r"sixteen|eighteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|thousand)")
_FIGURE = r"(?<![\w.,§()/-])\d+(?:[.,]\d+)*(?!\()"
"""A figure that states a value: not a footnote mark glued to a word ("narrowed.62", "holder28"), nor part of a
section reference ("(3.2.S.4.1)", "505(b)")."""
_NUMBER = rf"(?:{_FIGURE}|\b{_NUMBER_WORD})"
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"

# Asking phrases of the kinds with a value to hold, most specific first: the first that matches names the slot.
_VALUE_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("frequency", r"\bhow (?:often|frequently)\b|\bat what (?:interval|frequency)\b|\bhow many times\b"),
    ("duration", rf"\bhow (?:long|soon|quickly|late|early|far (?:ahead|in advance|before))\b"
                 rf"|\bhow many {_TIME_UNIT}\b|\b(?:within|in|after) (?:what|how much) (?:time|period)\b"
                 r"|\bwhat (?:is the )?(?:time ?frame|time limit|deadline|period|duration|time period|shelf life)\b"
                 r"|\b(?:what|which) time points?\b|\bby when\b"
                 r"|\bthe (?:longest|shortest|maximum|minimum) (?:[a-z-]+ ){0,3}(?:time|period|duration|use|exposure"
                 r"|interval)\b"),
    ("percentage", r"\bwhat (?:[a-z-]+ ){0,2}(?:percent|percentage|share|proportion|fraction)\b|\bwhat %"
                   r"|\bhow many percent\b|\bby (?:how much|what percentage)\b"),
    ("temperature", r"\b(?:what|which) temperatures?\b|\bhow (?:hot|cold|warm)\b"),
    ("money", r"\bhow much (?:money|does [a-z ]{1,40} cost|do we (?:pay|get back))\b"
              r"|\bhow much (?:is|are|was|were) (?:the )?(?:[a-z-]+ ){0,3}(?:fees?|costs?|prices?|charges?|payments?)\b"
              r"|\bwhat (?:is the )?(?:[a-z-]+ ){0,2}(?:fee|cost|price)s?\b|\bhow much of the [a-z ]{0,60}fee\b"),
    ("date", r"\b(?:on )?what date\b|\b(?:in )?(?:what|which) year\b|\bwhen (?:was|were|did) [a-z0-9() -]{1,60}"
             r"\b(?:issued|published|approved|adopted|finalized|signed|released|reach|reached|take effect|took effect"
             r"|become effective|became effective|withdrawn|removed)\b"),
    ("count", r"\bhow many\b|\bwhat number of\b"),
    ("quantity", r"\bhow much\b|\b(?:what|which) (?:is the )?(?:[a-z()-]+ ){0,4}(?:limit|dose|concentration|amount"
                 r"|volume|level|threshold|size|length|weight|strength|acceptance criterion|end ?point|cap|ratio"
                 r"|value|content)s?\b|\bup to what\b|\bhow (?:close|large|big|small|high|low)\b"),
    ("actor", r"^\W*who(?:m|se)?\b|\b(?:which|what) (?:office|center|centre|division|party|agency|organization"
              r"|organisation|entity|person|official|committee|body)\b"),
))
# Kinds any statement can answer, tried after a yes/no question is ruled out.
_OTHER_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("requirement", r"\bwhat does [a-z0-9() ,'-]{1,80} require\b|\bwhat (?:are|is) the requirements?\b"),
    ("list", r"\b(?:what|which) (?:[a-z()-]+ ){0,3}(?:kinds|types|categories|elements|items|criteria|conditions"
             r"|options|factors|aspects|concerns|considerations|evaluations|studies|restrictions|sites|documents"
             r"|files|questions|guidances|guidelines|products|steps|parts|sections|components)\b"
             r"|\bwhat (?:should|must) [a-z0-9() -]{1,60} include\b|\blist\b"),
    ("definition", r"^\W*what (?:is|are) (?:a|an|the)? ?[a-z0-9() '-]{1,60}\?$|\bhow does [a-z0-9() '-]{1,60} define\b"
                   r"|\bwhat does [a-z0-9() '-]{1,60} mean\b|^\W*define\b|\bwhat counts as\b|\bmeaning of\b"),
))
_ASKS_WHAT_DECIDES = re.compile(r"^\W*(?:what|which [a-z-]+) (?:decides|determines|affects|influences|governs|drives"
                                r"|dictates|sets) how\b")
""""What decides how many samples are taken?" asks for what decides, not for a count."""
_YES_NO = re.compile(r"^\W*(?:is|are|was|were|does|do|did|can|could|may|might|must|should|shall|will|would|has|have"
                     r"|had|need)\b")

_HOLDS: dict[str, re.Pattern[str]] = {kind: re.compile(pattern, re.IGNORECASE) for kind, pattern in (
    ("duration", rf"{_NUMBER}[- ]{_TIME_UNIT}\b|{_NUMBER}\s+(?:or (?:fewer|more|less)\s+)?(?:consecutive\s+)?"
                 rf"{_TIME_UNIT}\b|\b(?:immediately|promptly|annually|same day|until|(?:as|so) long as)\b"),
    ("frequency", rf"\b(?:annually|yearly|monthly|weekly|daily|quarterly|periodic(?:ally)?|regularly|continually"
                  rf"|continuously|every|each|once|twice|at least|frequency|frequent(?:ly)?)\b|{_NUMBER} times\b"
                  rf"|\bper {_TIME_UNIT}\b"),
    ("percentage", r"%|\bpercent(?:age)?\b|\bper cent\b"),
    ("count", rf"{_NUMBER}\b(?![- ]?(?:{_TIME_UNIT}|%|percent)\b)"),  # a number of things, not of days or percent
    ("temperature", r"°|º|\bdegrees?\b|\b\d+\s*[CF]\b"),
    ("money", r"\$|\bdollars?\b|\bfees?\b|%|\bpercent\b|\brefund"),
    ("date", rf"\b{_MONTH}\b|\b(?:19|20)\d\d\b"),
    ("quantity", _NUMBER),
    ("actor", r"\b(?:FDA|Agency|CDER|CBER|CVM|ICH|EMA|Office|Center|Division|Director|Committee|Commissioner)\b"
              r"|\b(?:applicants?|sponsors?|investigators?|holders?|manufacturers?|reviewers?|staff|team|firms?"
              r"|compan(?:y|ies)|physicians?|scientists?|chemists?|pharmacologists?|statisticians?|officials?"
              r"|authorit(?:y|ies)|regulators?|persons?|establishments?|divisions?|offices?|centers?|managers?"
              r"|branch(?:es)?|departments?|boards?|inspectors?|analysts?|supervisors?|personnel|employees?"
              r"|laborator(?:y|ies)|distributors?|wholesalers?|importers?|owners?|operators?"
              r"|(?:quality|control) unit)\b"
              r"|(?-i:\b[A-Z]{2,6}s?\b)"),  # an office's or group's acronym: ORA, WG
)}
_REQUIREMENT = re.compile(r"\b(?:must|shall|should|(?:is|are|be|been) required|requires?|required to|need to|needs to"
                          r"|necessary|expected to|mandatory)\b", re.IGNORECASE)
"""A sentence that states a requirement: its verb is one (the noun "requirements" in a list of sections is not)."""


def asked_slot(question: str) -> str:
    """The kind of value ``question`` asks for (one of ``KINDS``), read from the asking phrase of its last question
    sentence ("Can the record cover a larger run? What's the cap?" asks for the cap). A value's wh-phrase decides
    even inside a yes/no question ("Does FDA say how long ...?" asks how long); then a question that opens with an
    auxiliary is yes/no."""
    plain = re.sub(r"\b(what|who|how|when)['’]s\b", r"\1 is", " ".join(question.lower().split()))
    sentences = [s for s in re.split(r"(?<=\?)\s+", plain) if s]
    text = sentences[-1] if sentences else ""
    if _ASKS_WHAT_DECIDES.search(text):
        return "open"
    found = [(m.start(), order, kind) for order, (kind, pattern) in enumerate(_VALUE_ASKS)
             if (m := pattern.search(text))]
    if found:  # the wh-phrase that comes first asks; one inside a clause after it ("if unsure how much") does not
        return min(found)[2]
    if _YES_NO.match(text):
        return "yes_no"
    return next((kind for kind, pattern in _OTHER_ASKS if pattern.search(text)), "open")


def fills(kind: str, text: str) -> bool:
    """Does ``text`` hold a value of the asked ``kind``? Kinds without a value to hold are filled by any statement;
    a requirement question by a sentence that states one."""
    if kind == "requirement":
        return bool(_REQUIREMENT.search(text))
    pattern = _HOLDS.get(kind)
    return pattern is None or bool(pattern.search(text))
