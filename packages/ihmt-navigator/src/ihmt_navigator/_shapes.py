"""The kinds of value a question may ask for, and what a memory that gives one holds.

"What's Paula's email?" is not answered by a memory about Paula that holds no address,
"how often are the backups tested?" not by one that says where they are kept, and "when
is Ana's birthday?" not by one that says she moved house in May 2021. Each kind pairs
the words of a question that ask for it (its cue) with the shape of such a value in a
memory; only kinds whose values have a recognisable shape are listed, and each shape is
broad: a memory giving the value in any usual way holds it. English and Spanish, the
languages questions are read in.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["ANSWER_TYPES", "AnswerType"]


class AnswerType(NamedTuple):
    """A kind of value a question may ask for."""

    name: str
    """How the answer names it ("an email address")."""
    cue: re.Pattern[str]
    """The words of a question that ask for it."""
    shape: re.Pattern[str]
    """What a memory that gives it holds."""


_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|enero|febrero|marzo|"
    r"abril|mayo|junio|julio|agosto|se(?:p|t)tiembre|octubre|noviembre|diciembre)"
)
_COUNT_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|hundred|thousand|million|dozen|couple|single|both|half|"
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"uno|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|quince|veinte|"
    r"treinta|cien|ciento|mil|docena|ambos|ambas|primer|primera|segunda|tercer|tercera|"
    r"cuarto|cuarta|quinto|quinta)"
)
# A number that counts: digits that are not a year nor part of a date, a time of day, a
# version or a name ("2025-02-11", "09:15", "v1.2", "0.4.0", "ACME-02"), or a number
# word.
_COUNT = (
    r"(?<![\w/:.-])(?!(?:19|20)\d\d(?![\d,.])|\d+\.\d+\.\d)\d+(?:[,.]\d+)*(?![\w/:-]*\d)"
    rf"|(?i:\b{_COUNT_WORD}\b)"
)
_UNIT_OF_TIME = (
    r"(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|wks?|"
    r"weeks?|months?|mos?|quarters?|years?|yrs?|nights?|sprints?|segundos?|minutos?|"
    r"horas?|d[ií]as?|semanas?|mes|meses|trimestres?|a[nñ]os?|noches?)"
)
_DAY_NAMES = (
    r"(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|weekdays?|"
    r"weekends?|lunes|martes|mi[eé]rcoles|jueves|viernes|s[aá]bados?|domingos?)"
)

_DIRECTION = (
    r"(?:north|south|east|west|central|northeast|northwest|southeast|southwest|"
    r"northcentral|southcentral|westcentral)"
)
_GEOGRAPHY = (
    r"(?:us|europe|asia|uk|india|japan|australia|brazil|canada|korea|france|germany|"
    r"norway|switzerland|uae|qatar|sweden|poland|italy|spain|israel|mexico|chile|africa)"
)

# (name, cue, shape); "(?i)" where case does not matter.
_ANSWER_SHAPES = (
    ("an email address", r"(?i)\b(e-?mail|correo)\b", r"[^\s@]+@[^\s@]+\.\w+"),
    # Digits with separators, but not a date (2027-01-10, 10/01/2027) nor a version.
    # "Phone extension" asks for an extension (a few digits), not a phone number.
    ("a phone number",
     r"(?i)\b(phone|tel[eé]fono|celular|mobile number)\b(?!\s+ext(ension)?\b)",
     r"(?<![\w./-])(?!\d{4}-\d\d?-\d\d?(?!\d)|\d\d?[/.]\d\d?[/.]\d{2,4}(?!\d))"
     r"\+?\d[\d ()./-]{5,}\d"),
    # "handle" the noun ("Ana's GitHub handle"), not the verb ("how should I handle…").
    ("an extension",
     r"(?i)\b(?:phone|tel[eé]fono)\s+ext(?:ension)?\b|\bext(?:ension)?\s+(?:number|no)\b",
     r"(?i)\bext(?:ension)?\.?\s*(?:no\.?\s*|number\s*)?#?\d{2,6}\b"),
    ("a user name",
     r"(?i)\b(user ?name|usuario)\b|(?<!\bto )(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bthey )"
     r"(?<!\bshould )(?<!\bdo )(?<!\bdoes )(?<!\bcan )(?<!\bwill )\bhandle\b",
     r"(?i)(^|\s)@\w|\.com/\w|`\w+`"),
    # Not a part of a time (03:00), a date (2024-10-18) or a version (3.11).
    ("a port", r"(?i)\b(port|puerto)\b",
     r"(?<!\d)(?<!\d\.)(?<!\b\d\d:)(?<!\d-)\d{2,5}(?!\d)(?!\.\d)(?!:\d\d\b)(?!-\d)"),
    ("an age or a birth date",
     r"(?i)\bhow old\b|\bqu[eé] edad\b|\bcu[aá]ntos a[nñ]os tiene\b",
     r"(?i)\b\d+\s*(?:years?|yrs|a[nñ]os)\b|\bborn\b|\bnaci[oó]\b|\bbirthday\b|"
     r"cumplea[nñ]os|\bage\b|\bedad\b"),
    # A day of a month: "3 de mayo", "March 3rd", "the 3rd of March", "1990-03-03",
    # "3/5"; a month alone with a number ("in May 2021") is no birthday.
    ("a birthday", r"(?i)\bbirthday\b|\bcumplea[nñ]os\b",
     rf"(?i)\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+|de\s+)?{_MONTH}\b|"
     rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?![\d:])\b|"
     r"\b\d{4}-\d\d-\d\d\b|\b\d{1,2}[/.]\d{1,2}(?![\d:])\b"),
    ("an IP address", r"\bIP\b",
     r"(?i)\b\d{1,3}(\.\d{1,3}){3}\b|[0-9a-f]{1,4}(:[0-9a-f]{0,4}){2,7}"),
    # Any scheme (wss://, s3://), a host of three labels or more (any top-level
    # domain), or one of the common top-level domains.
    ("a web address", r"(?i)\b(url|link|enlace|website|sitio web)\b",
     r"(?i)\b[a-z][a-z0-9+.-]*://|\bwww\.|\b[a-z0-9-]+(\.[a-z0-9-]+)+\.[a-z]{2,}\b|"
     r"\b[\w-]+(\.[\w-]+)*\.(com|org|net|io|dev|app|run|ar|es|uk|ie|de|fr|nl|eu|cl|mx|"
     r"br|ch|co|ai|me|cloud|studio|tech|site|page)\b"),
    # A cloud provider's region by its code (us-east-1, europe-west4, northeurope,
    # eastus2, fsn1) or by name ("the Dublin region").
    ("a cloud region", r"(?i)\bregions?\b|\bregi[oó]n(?:es)?\b",
     rf"(?i)\b[a-z]{{2}}(?:-gov)?-{_DIRECTION}-\d\b|"
     rf"\b(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-{_DIRECTION}\d+\b|"
     rf"\b(?:{_DIRECTION}{_GEOGRAPHY}{_DIRECTION}?|{_GEOGRAPHY}{_DIRECTION})\d?\b|"
     r"\b(?:fsn|nbg|hel|ash|hil|sin|nyc|sfo|ams|lon|fra|sgp|blr|tor|syd|gra|rbx|sbg|waw)\d\b|"
     r"\b(?!(?:the|a|an|this|that|which|what|each|every|per|by|same|its|our|their|one|"
     r"other|another|any|new|la|una|esa|cada|misma)\b)[^\W\d_]+\s+region\b|"
     r"\bregi[oó]n\s+(?:de\s+)?[^\W\d_]{3,}"),
    # "Every 10 min", "nightly", "twice a week", "on Mondays", "cada semana", a cron
    # line.
    ("a frequency",
     r"(?i)\bhow (?:often|frequently)\b|\bhow many times\b|\bcada cu[aá]nto\b|"
     r"\bcon qu[eé] frecuencia\b|\bcu[aá]ntas veces\b",
     rf"(?i)\b(?:every|once|twice|thrice|always|never|whenever|daily|nightly|"
     rf"hourly|weekly|biweekly|fortnightly|monthly|quarterly|yearly|annually|cada|siempre|"
     rf"nunca|diari[oa]s?|diariamente|semanal(?:es|mente)?|mensual(?:es|mente)?|"
     rf"anual(?:es|mente)?|cron)\b|\b(?:a|an|al|por|per)\s+{_UNIT_OF_TIME}\b|"
     rf"\b{_DAY_NAMES}\b|\*/\d+|(?<!\w)\d+\s*(?:x|times|veces)\b|"
     rf"\beach\s+(?:time|{_UNIT_OF_TIME}|{_DAY_NAMES}|release|deploy|deployment|build|"
     rf"sprint|run|commit|merge|push)\b"),
    # "For 15 minutes", "48 h", "30 days", "until the sprint ends", "since 2020".
    ("a duration",
     r"(?i)\bhow long\b(?!\s+ago\b)|\bcu[aá]nto tiempo\b|\bcu[aá]nto (?:dura|duran|tarda|"
     r"tardan)\b|\bfor how long\b",
     rf"(?i)(?:(?<![\w/:-])\d+(?:[.,]\d+)?\s*-?\s*|\b(?:an?|one|two|three|four|five|six|"
     rf"seven|eight|nine|ten|twelve|fifteen|twenty|thirty|half an?|a few|several|un|una|"
     rf"dos|tres|cuatro|cinco|seis|diez|quince|veinte|treinta|unos|unas)\s+){_UNIT_OF_TIME}\b|"
     r"\b(?:until|till|forever|indefinitely|permanently|since|hasta|desde|siempre)\b|"
     r"(?<![\w-])(?:19|20)\d\d(?![\w-])|\b\d+(?:[.,]\d+)?\s*(?:m|cm|mm|km|inches|ft|"
     r"feet|chars?|characters?|lines?|words?|pages?|caracteres|l[ií]neas|palabras)\b"),
    # "How many" counts: a number, in digits or in words ("a third office"); not the
    # digits of a date or a time of day.
    ("a number", r"(?i)\bhow many\b(?!\s+times\b)|\bcu[aá]nt[oa]s\b(?!\s+veces\b)", _COUNT),
    # A price: a currency sign, code or word, or a number per period.
    ("a price",
     r"(?i)\bhow much\b[^?.]*\b(?:cost|costs|charge|charges|pay|paid|spend|bill)\b|"
     r"\bwhat (?:does|do|did|will)\b[^?.]*\bcost\b|\bprice of\b|\bprecio\b|"
     r"\bcu[aá]nto (?:cuesta|cuestan|vale|valen|cobra|cobran|paga|pagan|pagamos)\b",
     r"(?i)[$€£¥₹]|\b(?:usd|eur|gbp|clp|ars|mxn|dollars?|euros?|pounds?|pesos?|cents?|"
     r"bucks|free|gratis|gratuito)\b|\d\s*(?:k|m)?\s*(?:/|per|a|al|por)\s*"
     r"(?:mo|month|year|yr|seat|user|mes|año)\b"),
    # "09:30", "9am", "noon", "a las ocho"; "what time zone" asks for a zone.
    ("a time of day",
     r"(?i)\bwhat time\b(?!\s+zones?\b)|\bat what time\b|\ba qu[eé] hora\b",
     r"(?i)\b\d{1,2}[:.h]\d\d\b|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.|hs|hrs|h)\b|"
     r"\b(?:at|a las|from|by)\s+\d{1,2}\b|\b(?:noon|midnight|morning|mornings|evening|"
     r"evenings|afternoon|afternoons|lunch|lunchtime|mediod[ií]a|medianoche|ma[nñ]anas?|"
     r"tardes?|noches?|almuerzo)\b"),
)  # fmt: skip


ANSWER_TYPES: tuple[AnswerType, ...] = tuple(
    AnswerType(name, re.compile(cue), re.compile(shape)) for name, cue, shape in _ANSWER_SHAPES
)
"""What a question asks for, and what a memory must hold to answer it. Yes/no
questions ask for none (``_question.asked_for``)."""
