"""The words extraction shares across rules: what blocks a fact, where a value ends, what a
value cannot be. Data only; :mod:`ihmt_facts._extract` applies it.

The word lists are regex alternatives (``plans?\\s+to`` is "plan to" or "plans to"),
written as prose: one alternative per white-space separated word.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "APOSTROPHE",
    "BLOCKERS",
    "CLAUSE",
    "CONDITIONAL_START",
    "CUTS",
    "DETERMINER",
    "HOSTNAME",
    "LEADING",
    "NOT_A_NAME",
    "NOT_TECH",
    "OS",
    "PATIENT_LINE",
    "QUOTES",
    "SENTENCES",
    "TRAILING",
    "Cut",
    "one_of",
]


def one_of(words: str) -> str:
    """One group matching any of the white-space separated ``words`` (each a regex)."""
    return "(?:" + "|".join(words.split()) + ")"


APOSTROPHE = "['’]"
"""An apostrophe, straight or typographic."""

# ---------------------------------------------------------------------- sentences and guards
SENTENCES = re.compile(
    r"(?<=[.!?;])\s+"  # white space after . ! ? ;
    r"|(?<=[.!?])(?=[¿¡])"  # or a Spanish question or exclamation right after one
)
_LINKS = one_of(r"and but so then y e pero así\s+que asi\s+que entonces luego")
CLAUSE = re.compile(rf"[,;:]|\s{_LINKS}\s", re.IGNORECASE)
"""Where a clause starts: the guards below look only at the clause holding the match."""

_BLOCKING_WORDS = one_of(
    r"""not never no nor no\s+longer cannot if whether maybe perhaps might could should
    would will shall going\s+to gonna plans?\s+to planned planning wants?\s+to wanted hope
    hoping thinking considering used\s+to unless suppose imagine wonder wish pretend ask
    asked nunca jam[aá]s si quiz[aá]s? tal\s+vez a\s+lo\s+mejor podr[ií]amos podr[ií]a podemos
    deber[ií]amos deber[ií]a vamos\s+a voy\s+a va\s+a van\s+a quiero queremos quer[ií]a
    quer[ií]amos pensamos pienso pensando planeamos planeo gustar[ií]a ojal[aá] supongamos
    imagina sol[ií]a sol[ií]amos"""
)
BLOCKERS = re.compile(
    rf"\b{_BLOCKING_WORDS}\b"  # a negation, a doubt, a plan, a wish, a past habit
    rf"|n{APOSTROPHE}t\b"  # don't, isn't
    rf"|{APOSTROPHE}(?:ll|d)\b",  # we'll, I'd
    re.IGNORECASE,
)
"""A word that makes the clause before a match a negation or a hypothesis: no fact."""
_CONDITIONS = one_of(r"if when whenever once unless suppose si cuando en\s+caso\s+de suponiendo")
CONDITIONAL_START = re.compile(rf"^\W*{_CONDITIONS}\b", re.IGNORECASE)
"""A sentence that starts as a condition ("If we move to Go…") states no fact."""
PATIENT_LINE = re.compile(
    r"^\s*(?:[-*•]\s*)?"  # an optional bullet
    r"(?:paciente|patient|nombre\s+del\s+paciente|patient\s+name)\s*:\s*(?P<name>.+)$",
    re.IGNORECASE,
)
"""The line naming the patient of the clinical headers below it."""

# ---------------------------------------------------------------------- value cleaning
_STOP_WORDS = (
    r"and|but|because|since|so|while|whereas|where|which|who|whom|whose|when|until|after|before|"
    r"although|though|as|if|unless|with|without|for|from|via|y|e|pero|porque|aunque|donde|cuando|"
    r"mientras|hasta|desde|tras|que|como|si|pues|con|sin|para|por"
)
"""Words that end a value ("Madrid *because*…"), as regex alternatives."""
_LIST_STOP_WORDS = (
    r"but|because|since|so|while|whereas|where|which|when|until|although|though|unless|pero|"
    r"porque|aunque|donde|cuando|mientras|hasta|desde|que|pues"
)
"""Those that end a list value, which keeps "and", "with"…"""
_PUNCT_CUT = r"[;!?()\[\]{}\"“”«»]|\.(?=\s|$)|:\s|\s[-–—]\s"
"""Punctuation that ends any value but a header line: ; ! ? brackets, quotes, a full stop,
a colon, a dash between spaces."""

Cut = Literal["clause", "list", "line"]
"""Where a value ends: at a clause boundary, at the end of a list, at the end of a line."""
CUTS: dict[Cut, re.Pattern[str]] = {
    "clause": re.compile(rf"\s*(?:{_PUNCT_CUT}|,|\s(?:{_STOP_WORDS})\b)", re.IGNORECASE),
    "list": re.compile(rf"\s*(?:{_PUNCT_CUT}|\s(?:{_LIST_STOP_WORDS})\b)", re.IGNORECASE),
    "line": re.compile(r"\s*(?:\.(?=\s|$)|\s#\s)"),  # a full stop, or a " # " comment
}

_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|"
    r"diciembre"
)
TRAILING = re.compile(
    r"\s+(?:"
    # English: when, and how sure
    r"now|nowadays|currently|today|these\s+days|right\s+now|anymore|any\s+more|already|"
    r"too|also|as\s+well|again|permanently|for\s+good|full[- ]time|instead|recently|lately|"
    r"finally|yesterday|last\s+(?:year|month|week|night)|this\s+(?:year|month|week)|"
    r"in\s+\d{4}|on\s+\d{4}-\d{2}-\d{2}|in\s+(?:" + _MONTHS + r")(?:\s+\d{4})?|"
    # Spanish
    r"ahora|ahora\s+mismo|actualmente|ya|también|tambien|hoy|hoy\s+en\s+d[ií]a|de\s+nuevo|"
    r"otra\s+vez|definitivamente|recientemente|hace\s+poco|ayer|el\s+(?:año|mes)\s+pasado|"
    r"la\s+semana\s+pasada|este\s+(?:año|mes)|esta\s+semana|en\s+\d{4}|"
    r"en\s+(?:" + _MONTHS + r")(?:\s+(?:de\s+)?\d{4})?|por\s+fin|finalmente"
    r")$",
    re.IGNORECASE,
)
"""Filler at the end of a value: "Valencia *now*", "Go *en 2023*"."""
LEADING = re.compile(
    r"^(?:now|currently|actually|ahora|actualmente|ya)\s+"  # "now Valencia"
    r"|^to\s+(?=\w+)",  # "to Valencia"
    re.IGNORECASE,
)
"""Filler at the start of a value."""
DETERMINER = re.compile(
    r"^(?:the|our|my|el|la|los|las|nuestro|nuestra|nuestros|nuestras|mi)\s+", re.IGNORECASE
)
QUOTES = "\"'`“”‘’«»*_"
"""Stripped from both ends of a value."""
NOT_TECH = re.compile(
    r"^(?:"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|lunes|martes|mi[eé]rcoles|"
    r"jueves|viernes|s[aá]bado|domingo|" + _MONTHS + r"|"  # "the meeting is on Monday"
    r"vacation|holiday|holidays|leave|time|track|fire|hold|call|break|sale|"  # "is on leave"
    r"it|this|that|them|him|her|something|nothing|esto|eso|algo|nada|vacaciones|baja|"
    r"every|all|each|any|most|many|no|none|some|very|so|too|quite|pretty|kind|sort|not|"
    r"un|una|muy|bastante|demasiado|todo|todos|todas|cada|ning[uú]n|ninguna|"
    r"progress|page|a\s+mess|a\s+hurry"
    r")\b",
    re.IGNORECASE,
)
"""What a ``tech`` or ``list`` value never starts with: a day, a month, a pronoun…"""
OS = re.compile(
    r"^(?:"
    r"ubuntu|debian|fedora|centos|rhel|red\s+hat|rocky|alma(?:linux)?|alpine|arch(?:\s+linux)?|"
    r"manjaro|mint|linux\s+mint|pop!?_os|windows|win(?:10|11)|macos|mac\s+os|os\s+x|osx|freebsd|"
    r"openbsd|netbsd|nixos|opensuse|suse|sles|amazon\s+linux|linux|raspbian|raspberry\s+pi\s+os|"
    r"proxmox|truenas|chromeos|gentoo|void\s+linux|kali"
    r")\b",
    re.IGNORECASE,
)
"""What an ``os`` value starts with."""
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
HOSTNAME = re.compile(
    rf"^(?=.*[a-z]){_LABEL}(?:\.{_LABEL})+$"  # dotted labels, one letter at least
)
"""A dotted host name (an ``address`` value that is not an IP address)."""
NOT_A_NAME = frozenset(
    """i we you he she they it this that these those there here everyone everybody nobody
    someone somebody anyone who what which my our your his her their the a an yo tú tu él el
    ella nosotros nosotras ellos ellas usted ustedes nadie alguien todo todos todas mi nuestro
    nuestra su sus este esta estos estas eso esto quien quién la los las un una today now
    ahora hoy yesterday ayer also still then también luego entonces everything nothing
    something server host service machine box vm port""".split()  # noqa: SIM905 - a word list reads best as prose
)
"""Words that start no subject's name ("*The* server…" is no host called "The")."""
