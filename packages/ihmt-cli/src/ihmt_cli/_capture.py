"""Which sentences a user typed to a coding agent are worth remembering, by rules alone.

A user's message mixes requests ("fix the test"), questions, chatter ("thanks!"), pasted
logs and code with the occasional **durable statement**: a decision and its reason, how
the environment is set up, a preference, who someone is, a correction ("we moved X to
Y", "from now on …", "remember that …", "no, it's …"). :func:`durable_statements` finds
those, in English and Spanish, with no language model:

1. Code blocks, quoted lines and log-like lines are dropped; the rest is cut into
   sentences.
2. A sentence is never kept when it is a question, a request to the agent (it starts with
   a verb or "can you"), chatter, hedged ("maybe", "I think"), about the moment ("again",
   "today", "is failing"), or about a credential (a capture runs unattended, so it is
   stricter than a save: no password, token or key is ever taken, detected or not).
3. It is kept when it carries a cue: an explicit one ("remember that", "from now on",
   "always", "never", "I prefer", "we decided", "we moved to", "no longer"), or the shape
   of a standing fact: a subject the sentence names ("our CI", "the staging cluster", a
   person, the project) with a verb of state ("runs on", "is", "owns", "uses") and
   something specific (a name, a version, a host).

The rules were written against the train part of ``tools/bench/capture_data`` and are
measured on both parts by ``tools/bench/capture.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["MAX_STATEMENT_CHARS", "Kind", "Statement", "durable_statements", "is_change"]

Kind = Literal["remember", "rule", "preference", "decision", "change", "fact"]

MIN_WORDS = 4
MAX_WORDS = 60
MAX_STATEMENT_CHARS = 400


@dataclass(frozen=True, slots=True, kw_only=True)
class Statement:
    """A durable statement found in what the user typed."""

    text: str
    """The sentence, cleaned: leading interjections ("ok, so …") and "remember that" gone."""
    kind: Kind
    """The cue that made it durable."""


def _words(*items: str) -> str:
    return "|".join(sorted((i for i in items), key=len, reverse=True))


# ---------------------------------------------------------------------- cues
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|for the record|fyi|"
    r"recuerda|ten en cuenta|apunta|toma nota de)\b(?:\s+(?:that|que|de que))?[\s,:]*",
    re.I,
)
_RULE = re.compile(
    r"\b(?:from now on|going forward|from here on|in the future|by default|always|never|"
    r"ever|don'?t ever|a partir de ahora|de ahora en adelante|siempre|nunca|jam[aá]s)\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+)?(?:prefer|like|love|hate|'d rather|would rather|"
    r"don'?t like|do not like|dislike|avoid)\b(?!\s+(?:this|that|it|these|those|the fix|"
    r"your)\b)|\b(?:prefiero|preferimos|me gusta|no me gusta|odio)\b(?!\s+(?:esto|eso)\b)"
    r"|\bmy preference\b",
    re.I,
)
"""A standing preference, not a verdict on what is on screen ("I like this")."""
_DECISION = re.compile(
    r"\b(?:we|i|the team)\s+(?:have\s+|'ve\s+)?(?:decided|agreed|chose|picked|settled on|"
    r"went with|are going with|'re going with|standardi[sz]ed on)\b|\b(?:decidimos|"
    r"hemos decidido|acordamos|elegimos|hemos elegido|optamos)\b|\bthe decision is\b",
    re.I,
)
_CHANGE = re.compile(
    r"\b(?:we|they|i)\s+(?:have\s+|'ve\s+|just\s+)?(?:moved|migrated|switched|replaced|"
    r"upgraded|downgraded|changed|renamed|ported|rewrote|dropped)\b|"
    r"\b(?:moved|migrated|switched|changed|upgraded)\s+(?:\w+\s+){0,3}?(?:to|from)\b|"
    r"\b(?:is|are|runs?|lives?|uses?)\s+(?:\w+\s+){0,2}?now\b|\bnow\s+(?:is|are|runs?|"
    r"uses?|lives?|goes?|go)\b|\bno longer\b|\bnot\s+\S+\s+any\s*more\b|\banymore\b|"
    r"\bya no\b|\b(?:hemos|han)\s+(?:migrado|cambiado|movido|pasado)\b|"
    r"\b(?:migramos|cambiamos|movimos|pasamos)\b|\bahora\s+(?:es|est[aá]|usamos|"
    r"usa|va|corre)\b|\bdesde\s+(?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|"
    r"septiembre|octubre|noviembre|diciembre|hace)\b",
    re.I,
)
_STATE_VERB = re.compile(
    r"\b(?:is|are|runs?|run on|uses?|lives?|owns?|leads?|reviews?|handles?|maintains?|"
    r"targets?|talks? to|goes? to|go to|deploys?|ships?|builds? with|signs? off|rotates?|"
    r"does|do all|is written in|are written in|is hosted|are hosted|is deployed|"
    r"are deployed|is handled by|are handled by|is owned by|are owned by|is built|"
    r"are built|get|gets|come from|comes from|belongs? to|sits? on|support|supports|"
    r"es|son|est[aá]n?|usa|usamos|corre|corren|vive|lleva|llevan|revisa|revisan|"
    r"se env[ií]an?|manda|mandan|se despliega|pide|piden|vale|valen)\b",
    re.I,
)
_FIRST_PERSON_STATE = re.compile(
    r"^(?:we|we're|we are|our|my|mi|mis|nuestro|nuestra|nuestros|nuestras|usamos)\b", re.I
)
"""A sentence about how the user's world is ("we use …", "our CI …", "my advisor …")."""
_SPECIFIC = re.compile(
    r"(?<!^)\b[A-Z][\w.+#-]*[A-Za-z0-9]|"  # a name, not the sentence's first word
    r"\b[A-Z]{2,}\b|\d|[\w-]+\.[a-z]{2,}\b|\S+/\S+|@|#\w|`[^`]+`|\b\w+[-_]\w+\b",
)
_NAMED_SUBJECT = re.compile(r"^[A-Z][\w.-]+(?:\s+[A-Z][\w.-]+){0,2}\s+(?!is\b|are\b)\w+")
"""A name as the subject ("Marta reviews …"), not a capitalised first word before "is"."""
# ---------------------------------------------------------------------- refusals
_QUESTION_START = re.compile(
    r"^(?:what|what's|whats|how|why|which|where|who|when|whose|is|are|was|were|do|does|"
    r"did|can|could|should|would|will|shall|may|any idea|qu[eé]|c[oó]mo|por qu[eé]|"
    r"cu[aá]l|cu[aá]les|d[oó]nde|qui[eé]n|cu[aá]ndo|cu[aá]nto|puedes|podr[ií]as|me ayudas)\b",
    re.I,
)
_REQUEST_START = re.compile(
    r"^(?:please\s+|pls\s+|now\s+|then\s+|just\s+)?(?:can you|could you|would you|will you|"
    r"let'?s|lets|let me|go ahead|try|add|fix|run|make|write|show|rename|bump|check|look|"
    r"create|update|remove|delete|push|deploy|launch|prepare|export|plot|count|flash|ship|"
    r"open|read|find|install|build|test|revert|restore|merge|commit|send|give|tell|explain|"
    r"help|do|put|move|set|change|replace|use|leave|skip|retry|rerun|re-run|wrap|convert|"
    r"generate|draft|refactor|clean|format|review|resubmit|start|stop|kill|restart|"
    r"a[nñ]ade|arregla|lanza|revisa|mira|haz|pon|quita|borra|escribe|ejecuta|prueba|"
    r"despliega|cambia|usa|crea|sube|actualiza)\b",
    re.I,
)
_CHATTER = re.compile(
    r"^(?:thanks|thank you|thx|ty|great|cool|nice|perfect|awesome|ok|okay|k|lol|haha|"
    r"hi|hey|hello|morning|good morning|night|good night|bye|yes|yeah|yep|no|nope|sure|"
    r"fine|done|hmm|ugh|oops|gracias|vale|perfecto|genial|hola|buenos d[ií]as|s[ií]|"
    r"claro|de acuerdo)\b[\s!.,👍🙂]*$",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:maybe|probably|perhaps|i think|i guess|i suppose|not sure|i'm not sure|"
    r"seems|looks like|might|we should|we could|should we|could we|how about|what if|"
    r"i'd suggest|quiz[aá]s?|creo que|a lo mejor|no s[eé]|deber[ií]amos|podr[ií]amos)\b",
    re.I,
)
_MOMENT = re.compile(
    r"\b(?:again|today|tonight|right now|at the moment|currently|this morning|yesterday|"
    r"just now|still|broke|broken|breaks|fails|failing|failed|crashes|crashing|crashed|"
    r"is red|are red|slow|noisy|won'?t|doesn'?t work|not working|hoy|otra vez|ahora mismo|"
    r"falla|fallan|roto|rota)\b",
    re.I,
)
_CREDENTIAL = re.compile(
    r"\b(?:password|passwd|passphrase|token|api[ -]?key|secret|credentials?|private key|"
    r"ssh key|contrase[nñ]a|clave)\b|\bkey\s*[:=]",
    re.I,
)
_ABOUT_AGENT = re.compile(
    r"^(?:you|your|you're|you've|it|it's|this|that|that's|these|those|here|here's|there|"
    r"there's|i'll|i will|i'm|i am|i was|i just|i need|i have|tú|t[uú]|esto|eso|aqu[ií])\b",
    re.I,
)
"""Sentences about the conversation itself ("that's wrong", "here's the log", "I'll check")."""
_LEAD = re.compile(
    r"^(?:(?:ok|okay|yes|yeah|yep|no|nope|right|ah|oh|and|also|so|btw|well|hmm|great|"
    r"thanks|sure|then|plus|but|actually|s[ií]|vale|bueno|pues|y|tambi[eé]n|ah,? y|"
    r"oh,? y|y adem[aá]s)\b[\s,.!:;-]*)+",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(¿¡\w])|\n+")
"""A sentence ends at a stop and a space, whatever case the next word has: people type
"thanks, that works. remember that …" as often as not (abbreviations are joined back)."""
_ABBREVIATIONS = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof|St|vs|etc|e\.g|i\.e|approx|Sr|Sra)\.$", re.I)
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_LOG_LINE = re.compile(
    r"^\s*(?:>|\$ |#|\||at |File \"|Traceback|[A-Z][a-zA-Z]*(?:Error|Exception)\b|"
    r"\d{4}-\d\d-\d\d[ T]\d\d:|\[\w+\]|[-+]{3}|@@|[{}\[\]])"
)


def _sentences(text: str) -> list[str]:
    """The prose of ``text`` cut into sentences (code, quotes and log lines dropped)."""
    text = _FENCE.sub("\n", text)
    lines = [line for line in text.splitlines() if not _LOG_LINE.match(line)]
    out: list[str] = []
    for piece in _SENTENCE_END.split("\n".join(lines)):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ABBREVIATIONS.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _clean(sentence: str) -> str:
    text = _LEAD.sub("", sentence).strip()
    text = _REMEMBER.sub("", text).strip()
    text = text.rstrip(" ,;:-")
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text


def _kind(sentence: str, cleaned: str) -> Kind | None:
    """Why ``sentence`` is durable, or None."""
    if _REMEMBER.match(_LEAD.sub("", sentence)):
        return "remember"
    if _CHANGE.search(cleaned):
        return "change"
    if _DECISION.search(cleaned):
        return "decision"
    if _PREFERENCE.search(cleaned):
        return "preference"
    if _RULE.search(cleaned):
        return "rule"
    specific = _SPECIFIC.search(cleaned) or _NAMED_SUBJECT.match(cleaned)
    if not specific or not _STATE_VERB.search(cleaned):
        return None
    if _FIRST_PERSON_STATE.match(cleaned):
        return "fact"
    # "The board is an nRF52840", "Ana owns the billing service": a subject of its own
    # (a noun phrase or a name before the verb), never "it", "this" or the agent.
    head = _STATE_VERB.split(cleaned, maxsplit=1)[0]
    if 1 <= len(head.split()) <= 8 and not _ABOUT_AGENT.match(cleaned):
        return "fact"
    return None


def _refused(sentence: str, cleaned: str) -> bool:
    words = cleaned.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or len(cleaned) > MAX_STATEMENT_CHARS:
        return True
    if sentence.rstrip().endswith("?") or "¿" in sentence or _CHATTER.match(cleaned):
        return True
    if _CREDENTIAL.search(sentence) or _HEDGE.search(cleaned):
        return True
    explicit = _REMEMBER.match(_LEAD.sub("", sentence)) or _RULE.search(cleaned)
    if _QUESTION_START.match(cleaned) and not cleaned.lower().startswith(("do not", "don't")):
        return True
    if _REQUEST_START.match(cleaned) and not explicit:
        return True
    return bool(_MOMENT.search(cleaned)) and not (explicit or _CHANGE.search(cleaned))


def durable_statements(text: str) -> list[Statement]:
    """The durable statements in one message the user typed, in order."""
    found: list[Statement] = []
    for sentence in _sentences(text):
        cleaned = _clean(sentence)
        if _refused(sentence, cleaned):
            continue
        kind = _kind(sentence, cleaned)
        if kind is not None and all(s.text != cleaned for s in found):
            found.append(Statement(text=cleaned, kind=kind))
    return found


def is_change(statement: Statement) -> bool:
    """A statement that says something changed: saved as the correction of what it
    changes (``replaces``)."""
    return statement.kind == "change" or bool(_CHANGE.search(statement.text))
