"""The built-in extraction rules: data only; :mod:`ihmt_facts._extract` runs them.

Each rule is written as the parts of its regular expression, one part a line, joined
without separators; a comment shows what the part reads. Searched case-insensitively,
so ``I`` also matches ``i``; ``(?-i:...)`` marks the few parts where case matters (a
person's name starts with a capital).

Every fragment that reads a token starts only where a token starts (a look-behind) and
reads at most a bounded number of characters: each rule then costs linear time, even on
a 200,000-character line with no space in it (issue #13, D7).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

from ihmt_facts._pattern import Pattern
from ihmt_facts._types import Language, SubjectRule, ValueKind
from ihmt_facts._vocabulary import APOSTROPHE, one_of

__all__ = ["DEFAULT_PATTERNS", "default_patterns"]


class _Rule(NamedTuple):
    """A rule as written: made a :class:`Pattern` (its regex compiled, checked) on first
    use, by :func:`default_patterns`."""

    name: str
    regex: str
    subject: SubjectRule
    attribute: str
    value_kind: ValueKind
    per_line: bool
    language: Language


def _rule(
    name: str,
    language: Language,
    subject: SubjectRule,
    attribute: str,
    kind: ValueKind,
    *parts: str,
    per_line: bool = False,
) -> _Rule:
    """A rule whose regex is ``parts`` joined as they are."""
    return _Rule(
        name=name,
        regex="".join(parts),
        subject=subject,
        attribute=attribute,
        value_kind=kind,
        per_line=per_line,
        language=language,
    )


# ---------------------------------------------------------------------- regex fragments
_Q = APOSTROPHE
_ADVERBS = one_of("now currently still also actually already just recently finally really")
_ADV = rf"(?:{_ADVERBS}\s+)?"
"""An optional adverb before the verb ("I *now* live in…")."""
_ADVERBS_ES = one_of("ahora actualmente ya también tambien todavía todavia aún aun")
_ADV_ES = rf"(?:{_ADVERBS_ES}\s+)?"
_FROM = r"(?:from\s+[\w.+#' -]{1,80}?\s+)?"
"""An optional "from <what was left>" before "to <value>"."""
_DE = r"(?:de\s+[\w.+#' -]{1,80}?\s+)?"

_HOST = r"(?<![\w.-])(?P<name>\w[\w.-]{0,252})"
"""A host name: "db01", "web-1.example.org"."""
_HOSTY = (
    r"(?P<name>"
    r"(?<![\w.-])(?=[\w-]{0,120}[\d._-])[\w.-]{1,160}(?![\w.-])"  # a token with a digit, . _ or -
    r"|laptop|desktop|workstation|pc|mac|nas|router"  # or a machine
    r"|staging|production|prod|dev|ci|sandbox)"  # or an environment
)
"""What can run an OS without being called a server: "web-1 runs Ubuntu", "my laptop runs…"."""

_HEAD_WORDS = one_of(
    r"""staging production prod pre-?prod pre-production dev development testing qa uat
    sandbox ci cd ci/cd backend back-end frontend front-end apis? databases? db cache queue
    auth search storage web website site apps? application cluster infra infrastructure
    monitoring logging hosting deploys? deployment services? servers? workers? scheduler
    gateway proxy broker pipeline repo repository registry producci[oó]n preproducci[oó]n
    pruebas desarrollo servicios? servidor(?:es)? aplicaci[oó]n base\s+de\s+datos
    repositorio"""
)
_HEADS = rf"{_HEAD_WORDS}\b"
"""Words that name a part of a project's system (the head of "the payments service")."""

_PERSON = (
    rf"(?!{_HEADS})"  # "Staging moved to PostgreSQL 17" is an environment, not a person
    r"(?<![\w'’-])(?P<name>(?-i:"
    r"[A-ZÁÉÍÓÚÑÜ][\w'’-]{1,60}"  # a capitalised name
    r"(?:\s+(?:de\s+|del\s+|van\s+|von\s+)?[A-ZÁÉÍÓÚÑÜ][\w'’-]{1,60})?"  # and a surname
    r"))"
)
"""A person's name: "Ana", "Luis Marín", "Carmen de la…" (its first two words)."""

_TECHY = (
    r"(?<![\w.-])(?=[\w-]{0,120}[\d._])[\w.-]{1,160}(?![\w.-])"  # with a digit, . or _: "k8s"
    r"|(?<![\w.-])(?-i:[A-Z]{2,}[\w-]{0,120})(?![\w-])"  # an acronym: "API", "CRM"
)
"""A technical token: "k8s", "v2.api", "API"."""

_RUNS_OS = (
    r"(?:runs|is\s+running|runs\s+on|is\s+on|uses|(?:was|has\s+been|is)\s+upgraded\s+to|"
    r"(?:was|has\s+been|is)\s+(?:reinstalled|reimaged|rebuilt)\s+(?:with|on))"
)
_RUNS_OS_ES = r"(?:corre|usa|ejecuta|lleva|tiene|funciona\s+con)"

_COMPONENT = (
    r"(?P<component>"
    r"(?:(?:the|our|my)\s+)?"
    r"(?:(?<![\w.+#-])(?!is\b|now\b|the\b|our\b)[\w.+#-]{1,60}\s+)?"  # "payments"
    rf"{_HEADS}"  # "service"
    rf"|{_TECHY})"  # or "k8s"
)
"""A part of the project: "the payments service", "our backend", "k8s"."""
_COMPONENT_ES = (
    r"(?P<component>"
    r"(?:(?:el|la|los|las|nuestro|nuestra|nuestros|nuestras|mi)\s+)?"
    rf"{_HEADS}"  # "servicio"
    r"(?:\s+de\s+(?-i:[a-záéíóúñü][\w-]*))?"  # "de pagos"
    rf"|{_TECHY})"
)
_FILED_UNDER = (
    r"^\W*(?:(?:\d{4}-\d\d-\d\d|\[[^\]]{1,40}\])\W+)?"  # an entry's date
    r"(?:(?:decision|choice|adr)\s+(?:changed\s+|updated\s+)?for\s+(?P<name>[\w.-]{2,60})"
    r"\s*:\s*)?"  # "Decision for falcon: "
)
"""Where a decision is said: at the start of the text, after its date, and under its
project's label ("Decision for falcon:") when it has one."""
_TOOL = r"(?P<value>[\w.+#/-]{1,60}(?:\s+[\w.+#/-]{1,60})?)"
"""A tool: one or two words ("NATS", "Cloud Run")."""
_PART = (
    r"(?P<component>[\w-]{2,40}(?:\s+[\w-]{2,40}){0,2}?)"
    r"(?=\s+instead\b|\s*[,;.(]|\s+because\b|\s+now\b|$)"
)
"""The part of the project a decision is about: "event bus", "search index"."""
_MIGRATE_COMPONENT = (
    r"(?P<component>"
    r"(?:(?:the|our)\s+)?"
    r"(?:(?<![\w.+#-])(?!from\b|to\b|over\b)[\w.+#-]{1,60}\s+)?"
    rf"{_HEADS}"
    rf"|{_TECHY})"
)
"""What "we migrated" moved: "the payments service", "k8s"."""
_MIGRATE_COMPONENT_ES = (
    r"(?P<component>"
    r"(?:el|la|los|las|nuestro|nuestra|nuestros|nuestras)\s+"
    rf"{_HEADS}"
    r"(?:\s+de\s+(?-i:[a-záéíóúñü][\w-]*))?)"
)

_PREFER = (
    rf"\bI\s+{_ADV}"
    r"(?:generally\s+|always\s+|usually\s+)?prefer\s+"
    r"(?!not\b|no\b|to\s+not\b)"  # "I prefer not to…" states no preference
)
_PREFER_ES = (
    rf"\b(?:yo\s+)?{_ADV_ES}"
    r"(?:siempre\s+|normalmente\s+)?prefiero\s+"
    r"(?!no\b|nada\b)"
)
_CLINICAL = r"^\s*(?:[-*•]\s*)?(?:"
"""The start of a clinical header line (an optional bullet); the rule closes the group."""


# ---------------------------------------------------------------------- the rules
# Tried in this order; the first to claim a part of a sentence wins. Each rule reads:
#   _rule(name, language, subject, attribute, value kind,
#         the parts of its regex...)
# fmt: off
_RULES: tuple[_Rule, ...] = (
    # ------------------------------------------------------------ hosts: port, address, OS
    _rule("host-port-en", "en", "host", "port", "port",
          r"\b(?:the\s+)?(?:(?:server|host|service|machine|vm|box|container)\s+)?",  # the server
          _HOST, r"\s+", _ADV,  # db01
          r"(?:listens|runs|is\s+listening|is\s+running|is\s+served|is\s+exposed|"
          r"is\s+available|is\s+reachable|answers)",  # listens
          r"\s+on\s+port\s+(?P<value>\d+)"),  # on port 5432
    _rule("host-port-of-en", "en", "host", "port", "port",
          r"\b(?:the\s+)?port\s+(?:of|for|on)\s+",  # the port of
          r"(?:the\s+)?(?:(?:server|host|service)\s+)?", _HOST,  # the server db01
          r"\s+is\s+", _ADV, r"(?P<value>\d+)"),  # is 5432
    _rule("host-port-s-en", "en", "host", "port", "port",
          _HOST, _Q, r"s\s+port\s+is\s+", _ADV,  # db01's port is
          r"(?P<value>\d+)"),
    _rule("host-port-es", "es", "host", "port", "port",
          r"\b(?:el\s+)?(?:(?:servidor|servicio|host|máquina|maquina)\s+)?",  # el servidor
          _HOST, r"\s+", _ADV_ES,  # db01
          r"(?:escucha|corre|está|esta|funciona|atiende|responde)",  # escucha
          r"\s+en\s+el\s+puerto\s+(?P<value>\d+)"),  # en el puerto 5432
    _rule("host-port-of-es", "es", "host", "port", "port",
          r"\bel\s+puerto\s+(?:de|del)\s+(?:(?:servidor|servicio)\s+)?",  # el puerto del servidor
          _HOST, r"\s+es\s+", _ADV_ES,  # db01 es
          r"(?:el\s+)?(?P<value>\d+)"),  # (el) 5432
    _rule("host-address-s-en", "en", "host", "address", "address",
          r"\b", _HOST, _Q,  # db01's
          r"s\s+(?:ip(?:\s+address)?|address|hostname)\s+is\s+", _ADV,  # IP address is
          r"(?P<value>\S+)"),
    _rule("host-address-of-en", "en", "host", "address", "address",
          r"\bthe\s+(?:ip(?:\s+address)?|address|hostname)\s+(?:of|for)\s+",  # the IP of
          r"(?:the\s+)?(?:(?:server|host|machine|vm|box)\s+)?", _HOST,  # the server db01
          r"\s+is\s+", _ADV, r"(?P<value>\S+)"),  # is 10.0.0.5
    _rule("host-address-at-en", "en", "host", "address", "address",
          r"\b(?:the\s+)?(?:(?:server|host|machine|vm|box)\s+)?", _HOST,  # the server db01
          r"\s+is\s+", _ADV, r"(?:at|reachable\s+at)\s+",  # is (reachable) at
          r"(?P<value>\d{1,3}(?:\.\d{1,3}){3})"),  # 10.0.0.5
    _rule("host-address-es", "es", "host", "address", "address",
          r"\bla\s+(?:ip|direcci[oó]n(?:\s+ip)?)\s+(?:de|del)\s+",  # la IP del
          r"(?:(?:servidor|host)\s+)?", _HOST,  # servidor db01
          r"\s+es\s+", _ADV_ES, r"(?P<value>\S+)"),  # es 10.0.0.5
    _rule("host-address-tiene-es", "es", "host", "address", "address",
          r"\b(?:el\s+)?(?:(?:servidor|host)\s+)?", _HOST,  # el servidor db01
          r"\s+tiene\s+", _ADV_ES, r"(?:la\s+)?(?:ip|direcci[oó]n)\s+",  # tiene la IP
          r"(?P<value>\S+)"),
    _rule("host-os-of-en", "en", "host", "os", "text",
          r"\bthe\s+(?:os|operating\s+system)\s+(?:of|on)\s+",  # the OS of
          r"(?:the\s+)?(?:(?:server|host|machine|vm|box)\s+)?", _HOST,  # the server db01
          r"\s+is\s+", _ADV, r"(?P<value>.+)"),  # is Ubuntu 22.04
    _rule("host-os-en", "en", "host", "os", "os",
          r"\b(?:(?:the|my|our)\s+)?(?:server|host|machine|vm|box|laptop|desktop|workstation)\s+",
          _HOST, r"\s+", _ADV, _RUNS_OS,  # web01 runs
          r"\s+(?P<value>.+)"),
    _rule("host-os-bare-en", "en", "host", "os", "os",
          r"\b(?:(?:the|my|our)\s+)?", _HOSTY, r"\s+", _ADV, _RUNS_OS,  # my laptop runs
          r"\s+(?P<value>.+)"),
    _rule("host-os-of-es", "es", "host", "os", "text",
          r"\bel\s+sistema\s+operativo\s+(?:de|del)\s+",  # el sistema operativo del
          r"(?:(?:servidor|host)\s+)?", _HOST,  # servidor db01
          r"\s+es\s+", _ADV_ES, r"(?P<value>.+)"),
    _rule("host-os-es", "es", "host", "os", "os",
          r"\b(?:(?:el|mi|nuestro)\s+)?(?:servidor|host|máquina|maquina|portátil|portatil)\s+",
          _HOST, r"\s+", _ADV_ES, _RUNS_OS_ES,  # web01 corre
          r"\s+(?P<value>.+)"),
    _rule("host-os-bare-es", "es", "host", "os", "os",
          r"\b(?:(?:el|mi|nuestro)\s+)?", _HOSTY, r"\s+", _ADV_ES, _RUNS_OS_ES,
          r"\s+(?P<value>.+)"),
    # ------------------------------------------------------------ the user: where, who for
    _rule("user-location-en", "en", "user", "location", "name",
          r"\bI\s+", _ADV,
          r"(?:live|am\s+living|am\s+based|reside|(?:have\s+)?been\s+living)\s+in\s+",
          r"(?P<value>.+)"),
    _rule("user-location-contracted-en", "en", "user", "location", "name",
          r"\bI", _Q, r"(?:m|ve)\s+", _ADV,  # I'm, I've
          r"(?:living|based|been\s+living)\s+in\s+(?P<value>.+)"),
    _rule("user-moved-en", "en", "user", "location", "name",
          r"\bI(?:\s+have|", _Q, r"ve)?\s+", _ADV,  # I('ve)
          r"(?:moved|relocated)\s+", _FROM,  # moved from Berlin
          r"(?:back\s+)?to\s+(?P<value>.+)"),  # (back) to Lisbon
    _rule("user-location-es", "es", "user", "location", "name",
          r"\b(?:vivo|resido)\s+", _ADV_ES, r"en\s+(?P<value>.+)"),
    _rule("user-moved-es", "es", "user", "location", "name",
          r"\b(?:me|nos)\s+(?:he\s+|hemos\s+)?",
          r"(?:mudado|mudé|mude|mudamos|trasladado|trasladé|traslade|trasladamos|"
          r"ido\s+a\s+vivir|fui\s+a\s+vivir|fuimos\s+a\s+vivir)\s+",  # me he mudado
          r"(?:(?:definitivamente|ya|por\s+fin|finalmente)\s+)?", _DE,  # (ya) de Madrid
          r"a\s+(?P<value>.+)"),  # a Valencia
    _rule("user-employer-en", "en", "user", "employer", "name",
          r"\bI\s+", _ADV, r"(?:work|am\s+working)\s+(?:at|for)\s+(?P<value>.+)"),
    _rule("user-employer-contracted-en", "en", "user", "employer", "name",
          r"\bI(?:", _Q, r"m|\s+am)\s+", _ADV,  # I'm, I am
          r"(?:working\s+(?:at|for)|employed\s+(?:at|by))\s+(?P<value>.+)"),
    _rule("user-employer-es", "es", "user", "employer", "name",
          r"\b(?:trabajo|estoy\s+trabajando)\s+", _ADV_ES, r"(?:en|para)\s+(?P<value>.+)"),
    _rule("user-stack-en", "en", "user", "stack", "list",
          r"\bmy\s+(?:tech(?:nology)?\s+)?stack\s+is\s+", _ADV, r"(?P<value>.+)"),
    _rule("user-stack-es", "es", "user", "stack", "list",
          r"\bmi\s+stack\s+(?:es|son)\s+", _ADV_ES, r"(?P<value>.+)"),
    # ------------------------------------------------------------ preferences
    # Stated inside a project, a preference is that project's: "In toucan I prefer 120
    # characters" must not retire weka's line length.
    _rule("preference-over-en", "en", "scope", "preference:{pair}", "text",
          _PREFER, r"(?P<value>.{1,200}?)",  # I prefer tabs
          r"\s+(?:over|to|rather\s+than|instead\s+of)\s+(?P<other>.+)"),  # over spaces
    _rule("preference-for-en", "en", "scope", "preference:{topic}", "text",
          _PREFER, r"(?P<value>.{1,200}?)\s+for\s+(?P<topic>.+)"),  # I prefer 120 for line length
    _rule("preference-en", "en", "scope", "preference:{value}", "text",
          _PREFER, r"(?P<value>.+)"),
    _rule("preference-over-es", "es", "scope", "preference:{pair}", "text",
          _PREFER_ES, r"(?P<value>.{1,200}?)",
          r"\s+(?:antes\s+que|en\s+vez\s+de|en\s+lugar\s+de|m[aá]s\s+que|sobre|frente\s+a|al|a)",
          r"\s+(?P<other>.+)"),
    _rule("preference-for-es", "es", "scope", "preference:{topic}", "text",
          _PREFER_ES, r"(?P<value>.{1,200}?)\s+para\s+(?P<topic>.+)"),
    _rule("preference-es", "es", "scope", "preference:{value}", "text",
          _PREFER_ES, r"(?P<value>.+)"),
    # ------------------------------------------------------------ other people
    _rule("person-employer-en", "en", "person", "employer", "name",
          _PERSON, r"\s+", _ADV, r"(?:works|is\s+", _ADV, r"working)",  # Ana (now) works
          r"\s+(?:at|for)\s+(?P<value>.+)"),  # at Acme
    _rule("person-location-en", "en", "person", "location", "name",
          _PERSON, r"\s+", _ADV, r"(?:lives|is\s+", _ADV, r"(?:living|based))",  # Ana lives
          r"\s+in\s+(?P<value>.+)"),
    _rule("person-moved-en", "en", "person", "location", "name",
          _PERSON, r"\s+(?:has\s+)?", _ADV, r"(?:moved|relocated)\s+", _FROM,  # Ana moved
          r"(?:back\s+)?to\s+(?P<value>.+)"),
    _rule("person-employer-es", "es", "person", "employer", "name",
          _PERSON, r"\s+", _ADV_ES, r"trabaja\s+", _ADV_ES, r"(?:en|para)\s+(?P<value>.+)"),
    _rule("person-location-es", "es", "person", "location", "name",
          _PERSON, r"\s+", _ADV_ES, r"(?:vive|reside)\s+", _ADV_ES, r"en\s+(?P<value>.+)"),
    _rule("person-moved-es", "es", "person", "location", "name",
          _PERSON, r"\s+se\s+(?:ha\s+)?",  # Carmen se ha
          r"(?:mudado|mudó|mudo|trasladado|trasladó|traslado|ido\s+a\s+vivir|fue\s+a\s+vivir)",
          r"\s+", _DE, r"a\s+(?P<value>.+)"),  # mudado a Málaga
    # ------------------------------------------------------------ a project's stack and parts
    _rule("scope-stack-en", "en", "scope", "stack", "list",
          r"\b(?:our|the\s+project", _Q, r"s|this\s+project", _Q, r"s|the)\s+",  # our
          r"(?:tech(?:nology)?\s+)?stack\s+is\s+", _ADV, r"(?P<value>.+)"),  # stack is
    _rule("scope-stack-es", "es", "scope", "stack", "list",
          r"\b(?:nuestro|el)\s+stack\s+(?:tecnol[oó]gico\s+|del\s+proyecto\s+)?(?:es|son)\s+",
          _ADV_ES, r"(?P<value>.+)"),
    _rule("scope-component-is-en", "en", "scope", "{component}", "name",
          r"\b(?:our|the\s+project", _Q, r"s|this\s+project", _Q, r"s)\s+",  # our
          r"(?P<component>", _HEADS, r")",  # database
          r"\s+is\s+", _ADV, r"(?P<value>.+)"),  # is PostgreSQL
    _rule("scope-component-is-es", "es", "scope", "{component}", "name",
          r"\b(?:nuestro|nuestra)\s+(?P<component>", _HEADS, r")",  # nuestra base de datos
          r"\s+(?:es|son)\s+", _ADV_ES, r"(?P<value>.+)"),
    _rule("scope-migrated-component-en", "en", "scope", "{component}", "tech",
          r"\bwe(?:\s+have|", _Q, r"ve)?\s+", _ADV,  # we('ve)
          r"(?:migrated|switched|ported|moved)\s+", _MIGRATE_COMPONENT,  # migrated the backend
          r"\s+", _FROM, r"(?:over\s+)?to\s+(?P<value>.+)"),  # (from Python) to Go
    _rule("scope-migrated-en", "en", "scope", "stack", "tech",
          r"\bwe(?:\s+have|", _Q, r"ve)?\s+", _ADV,
          r"(?:migrated|switched|ported)\s+", _FROM,  # migrated (from Python)
          r"(?:over\s+)?to\s+(?P<value>.+)"),  # to Go
    _rule("scope-migrated-component-es", "es", "scope", "{component}", "tech",
          r"\b(?:hemos\s+)?(?:migramos|migrado|movimos|movido|pasamos|pasado|cambiamos|cambiado|"
          r"portamos|portado)\s+",  # hemos migrado
          _MIGRATE_COMPONENT_ES, r"\s+", _DE, r"a\s+(?P<value>.+)"),  # el backend a Go
    _rule("scope-migrated-es", "es", "scope", "stack", "tech",
          r"\b(?:hemos\s+)?(?:migramos|migrado|cambiamos|cambiado|portamos|portado)\s+",
          _DE, r"a\s+(?P<value>.+)"),
    _rule("scope-runs-on-en", "en", "scope", "{component}", "tech",
          r"\b", _COMPONENT, r"\s+", _ADV,  # the payments service
          r"(?:runs|is\s+running|is\s+hosted|is\s+deployed|lives|is\s+built|is\s+written)",
          r"\s+(?:on|in)\s+(?:top\s+of\s+)?", _ADV, r"(?P<value>.+)"),  # runs on Kubernetes
    _rule("scope-moved-en", "en", "scope", "{component}", "tech",
          r"\b", _COMPONENT,
          r"\s+(?:has\s+|was\s+|have\s+been\s+|has\s+been\s+)?", _ADV,
          r"(?:moved|migrated|switched|upgraded)\s+", _FROM,  # moved from MySQL
          r"to\s+(?P<value>.+)"),  # to PostgreSQL
    _rule("scope-is-now-on-en", "en", "scope", "{component}", "tech",
          r"\b", _COMPONENT, r"\s+is\s+now\s+(?:on|in)\s+(?P<value>.+)"),
    _rule("scope-is-on-now-en", "en", "scope", "{component}", "tech",
          r"\b", _COMPONENT, r"\s+is\s+(?:on|in)\s+",
          r"(?P<value>[^.;,!?]{1,120}?\s+now)\b"),  # on PostgreSQL 17 now
    _rule("scope-runs-on-es", "es", "scope", "{component}", "tech",
          r"\b", _COMPONENT_ES, r"\s+", _ADV_ES,
          r"(?:corre|funciona|se\s+ejecuta|vive|est[aá]\s+desplegad[oa]|est[aá]\s+escrit[oa])",
          r"\s+", _ADV_ES, r"(?:en|sobre|con)\s+(?P<value>.+)"),
    _rule("scope-moved-es", "es", "scope", "{component}", "tech",
          r"\b", _COMPONENT_ES, r"\s+(?:se\s+)?(?:ha\s+)?(?:movido|mudado|migrado|pasado)\s+",
          _DE, r"a\s+(?P<value>.+)"),
    _rule("scope-is-now-on-es", "es", "scope", "{component}", "tech",
          r"\b", _COMPONENT_ES, r"\s+(?:ahora|ya)\s+est[aá]\s+en\s+(?P<value>.+)"),
    _rule("scope-is-on-now-es", "es", "scope", "{component}", "tech",
          r"\b", _COMPONENT_ES, r"\s+est[aá]\s+en\s+",
          r"(?P<value>[^.;,!?]{1,120}?\s+(?:ahora|ya))\b"),
    # ------------------------------------------------------------ a project's decisions
    # "ADR for falcon: we chose NATS for the event bus, for replay" and, later,
    # "Decision updated for falcon: the event bus now uses Redis Streams": which tool a named
    # part of the project uses. The project is the memory's, or the one its text is
    # filed under; a decision of no known project records nothing.
    _rule("decision-use-en", "en", "project", "{component}", "tech",
          _FILED_UNDER, _ADV, r"(?:we\s+)?(?:will\s+)?(?:use|chose|picked|adopted)\s+",
          _TOOL, r"\s+for\s+(?:the|our|its)\s+", _PART),
    _rule("decision-now-uses-en", "en", "project", "{component}", "tech",
          _FILED_UNDER, r"(?:the|our|its)\s+", _PART,
          r"\s+now\s+uses\s+", _TOOL, r"(?=\s+instead\b|\s*[,;.(]|\s+because\b|$)"),
    # ------------------------------------------------------------ clinical headers
    _rule("clinical-diagnosis", "en", "patient", "diagnosis", "line",
          _CLINICAL,
          r"diagn[oó]stico(?:\s+principal)?|(?:primary\s+|main\s+|final\s+)?diagnosis|dx|",
          r"juicio\s+cl[ií]nico)\s*:\s*(?P<value>.+)$", per_line=True),
    _rule("clinical-treatment", "en", "patient", "treatment", "line",
          _CLINICAL, r"tratamiento|treatment|tx|plan\s+terap[eé]utico)",
          r"\s*:\s*(?P<value>.+)$", per_line=True),
    _rule("clinical-medication", "en", "patient", "medication", "line",
          _CLINICAL, r"medicaci[oó]n|medicamentos?|f[aá]rmacos|medications?|meds)",
          r"\s*:\s*(?P<value>.+)$", per_line=True),
    _rule("clinical-allergies", "en", "patient", "allergies", "line",
          _CLINICAL, r"alergias?|allerg(?:y|ies))",
          r"\s*:\s*(?P<value>.+)$", per_line=True),
    # "Django 5.2", "Kotlin 1.9.0", "Nomad 1.7": the version of a named tool as the
    # memory states it (dotted numbers only: "Pixel 6" or "API 33" name no version). A
    # value being left ("from Terraform 1.5.7", "PostgreSQL 14 to 16") is not stated.
    _rule("tech-version", "en", "scope", "{component} version", "tech",
          r"(?<![\w.-])(?<!from\s)(?<!de\s)",  # not after "from"/"de"
          r"(?P<component>(?-i:[A-Z][A-Za-z][\w+#-]{0,24}))",  # Django
          r"\s{1,3}v?(?P<value>\d{1,4}(?:\.\d{1,4}){1,2})(?![\w-])(?!\.\w)",  # 5.2
          r"(?!\s{1,3}(?:to|a|hasta|->|→)\s)"),  # not "14 to 16"
)
# fmt: on


@functools.cache
def default_patterns() -> tuple[Pattern, ...]:
    """The built-in rules, tried in this order; the first to claim a part of a sentence wins.

    Made on the first call, not at import, and each regex compiled only when a text first
    passes its rule's gate (``Pattern.compiled``, cached): extracting the facts of one
    memory compiles the few rules it may match, not all of them.
    """
    # Checked by tests/test_rules_compiled_on_use.py, which makes each with Pattern(...).
    return tuple(Pattern._unchecked(**rule._asdict()) for rule in _RULES)


if TYPE_CHECKING:
    DEFAULT_PATTERNS: tuple[Pattern, ...]
    """The built-in rules (:func:`default_patterns`), read as a module attribute."""


def __getattr__(name: str) -> tuple[Pattern, ...]:
    if name == "DEFAULT_PATTERNS":
        return default_patterns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
