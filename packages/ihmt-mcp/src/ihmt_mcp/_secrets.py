"""Finding secrets in text before it is saved: key shapes, key blocks, passwords in any form.

Three layers, all over a normalised copy of the text (NFKC, zero-width and soft-hyphen
characters removed, so ``ＡＫＩＡ…`` and ``ghp_<ZWSP>…`` look like what they are):

1. our own rules: key shapes, private keys in any case or without their header,
   credentials in URLs, ``NAME_SECRET=…`` assignments, command-line passwords and
   "the password is X" / "la contraseña es X" in plain prose;
2. the maintained plugins of ``detect-secrets`` (Yelp) for the vendors we do not list;
3. the same two layers again over every base64 run that decodes to text, so an encoded
   PEM key or ``AKIA…:secret`` pair is found too.

A false-positive list (placeholders, variables, pointers such as "in 1Password", and
words about passwords) keeps sentences that hold no secret saveable. Every pattern has
bounded repeats only: the scan stays linear in the length of the text.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["SecretFinding", "find_secrets", "normalise"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretFinding:
    """A secret found in a text: what kind, and on which line (never the secret itself)."""

    kind: str
    """A plain name, e.g. ``a GitHub token`` or ``a private key``."""
    line: int
    """1-based line number."""


# Zero-width characters, the soft hyphen, the word joiner and the BOM: invisible, and
# used to split a token so that a pattern misses it.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]")


def normalise(text: str) -> str:
    """``text`` as a pattern should see it: NFKC, invisible characters removed.

    Lines stay lines (same count, same order), so a finding's line number is the line
    of the original text.
    """
    return "\n".join(
        _INVISIBLE.sub("", unicodedata.normalize("NFKC", line)) for line in text.split("\n")
    )


_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("a private key", r"(?i)-----\s?BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?"),
        # A key body without its header: DER of a key (MII…) or an OpenSSH key blob.
        ("a private key", r"\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,}"),
        ("a private key", r"(?m)^\s{0,8}MII[A-Za-z0-9+/]{60,}={0,2}\s*$"),
        ("an AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}\b"),
        (
            "an AWS secret key",
            r"(?i)aws_?secret_?(?:access_?)?key\W{0,3}[=:]\s{0,8}['\"]?[A-Za-z0-9/+=]{40}\b",
        ),
        ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
        ("a GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{40,255}\b"),
        ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("a Slack webhook", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/\w+"),
        ("a Stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("a Google OAuth secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}"),
        ("an Anthropic API key", r"\bsk-ant-[a-z]{1,20}\d{0,4}-[A-Za-z0-9_-]{20,}"),
        (
            "an OpenAI API key",
            r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]{0,200}\d)"
            r"(?=[A-Za-z0-9_-]{0,200}[A-Za-z])[A-Za-z0-9_-]{32,}",
        ),
        ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{34,}\b"),
        ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        ("a SendGrid key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
        ("a Twilio key", r"\bSK[0-9a-f]{32}\b"),
        ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}"),
        ("a bearer token", r"(?i)\bbearer\s{1,8}[A-Za-z0-9._~+/-]{24,}=*"),
        ("a basic-auth credential", r"(?i)\bauthorization\W{0,4}basic\s{1,8}[A-Za-z0-9+/]{8,}"),
        (
            "a password inside a URL",
            r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'\"]{0,200}:(?!\$\{|\{\{|\*+@|<)"
            r"[^\s/:@'\"]{3,200}@[\w.-]+",
        ),
    )
)

# NAME = value, where NAME says it holds a password or a secret: password, PGPASSWORD,
# MY_SERVICE_SECRET, API_TOKEN, "webhook secret", client-secret, private_key…
_ASSIGNMENT = re.compile(
    r"(?i)(?<![\w-])(?P<key>[a-z0-9_.-]{0,40}?(?P<word>passwords?|passwd|(?<=[_-])pass|passphrase|pwd|"
    r"contraseña|contrasena|clave|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|"
    r"credentials?|auth)(?:[_-]?(?:key|value|token))?)"
    r"(?P<gap>['\"]?\s{0,4}(?::=|=>|[:=])\s{0,8})(?P<value>\S.{0,300})",
    re.MULTILINE,
)
# Plain prose: "the wifi password is X", "root password for stg-db-01 is X",
# "la contraseña del router es X", "mi clave era X", "pw: X".
_PROSE = re.compile(
    r"(?i)\b(?P<word>passwords?|passphrase|passcode|passwd|pwd|pw|pin|contraseña|contrasena|"
    r"clave)\b"
    # "the password manager is Keeper Cloud": the sentence is about something else
    r"(?!\s+(?:managers?|policy|policies|rotation|reset|vault|hint|length|rules?|strength|"
    r"requirements?|expiry|generator|store)\b)"
    r"[^.\n:=]{0,60}?\s(?:is|was|are|es|era|será|sería|fue)\s{1,4}"
    r"(?:now\s|ahora\s|still\s|todavía\s|:\s?|"
    r"(?:changed|set|reset|updated|cambiad[ao]|puest[ao])\s{1,4}(?:to|a)\s{1,4})?"
    r"(?P<value>\S{1,200})"
)
# Passwords on a command line: mysql -pX, --password X, docker login -p X, sshpass -p X.
_COMMAND = re.compile(
    r"(?i)(?:\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,120}?\s-p(?P<glued>[^\s-][^\s]{0,200})"
    r"|\b(?:login|sshpass|mysql|mysqldump|psql|redis-cli|curl|htpasswd|mongo|mongosh)\b"
    r"[^\n]{0,120}?\s(?:-p|--password|-a|--pass)(?:=|\s{1,4})(?P<spaced>[^\s-][^\s]{0,200})"
    r"|\s--password(?:=|\s{1,4})(?P<flag>[^\s-][^\s]{0,200}))"
)
# A 40-character AWS-style secret standing alone (a git SHA is lower-case hex: not this).
_BARE_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_HEX_RUN = re.compile(r"^[0-9a-fA-F]{20,}$")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}|[A-Za-z0-9_-]{24,}={0,2}")

_PLACEHOLDER = re.compile(
    r"(?i)^(?:\**|x+|\.+|-+|_+|<[^>]{0,100}>|\[[^\]]{0,100}\]|\{[^}]{0,100}\}|\$\{?[\w.:-]{0,100}\}?|"
    r"%\(?\w{0,40}\)?s?|none|null|nil|true|false|yes|no|required|optional|redacted|hidden|"
    r"secret|password|changeme_placeholder|your[\w-]{0,40}|example|todo|tbd|n/?a|env|"
    r"(?:os\.)?(?:environ|getenv)\b.*|process\.env\b.*|[A-Za-z_][\w.]{0,100}\(.*|"
    r"[A-Za-z_][\w]{0,60}\.[A-Za-z_][\w.]{0,60}|(?-i:[A-Z][A-Z0-9_]{2,60}))$"
)
# Words that follow "password is …" in sentences that hold no password.
_NOT_A_PASSWORD = frozenset(
    """
    a an the in on at of for to from with by via not no never always only still also just
    set stored saved kept hashed encrypted salted rotated changed reset required needed
    missing wrong correct incorrect invalid valid expired weak strong long short empty
    managed shared known unknown given sent asked prompted checked case-sensitive optional
    generated random same different hidden masked redacted secret private public ok fine
    too very more less at-least minimum maximum mandatory usually being now then there here
    what which that this those these your my our his her their its one two three
    stored_in 1password bitwarden lastpass keepass vault keychain pass env environment
    el la los las un una en de del por para con sin no nunca siempre solo también
    guardada guardado cifrada cifrado obligatoria obligatorio larga largo corta corto
    segura seguro débil fuerte distinta distinto igual nueva nuevo vieja viejo mía tuya
    """.split()  # noqa: SIM905 - a word list reads better as prose than as 150 quoted items
)


def _entropy(value: str) -> float:
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def _assigned_value(raw: str) -> str:
    raw = raw.strip()
    if raw[:1] in ("'", '"', "`"):
        quote = raw[0]
        end = raw.find(quote, 1)
        return raw[1:end] if end > 0 else ""
    return re.split(r"[\s,;)]", raw, maxsplit=1)[0]


def _is_password_value(value: str) -> bool:
    """A value after ``password=``: not a placeholder, and mixed or long."""
    if len(value) < 4 or _PLACEHOLDER.match(value) or value != value.strip():
        return False  # a "value" with spaces at its ends is a quoted phrase in prose
    # A bare lower-case word after "password:" in prose ("password: see the vault") is
    # a pointer, not a password; real passwords mix classes or are long.
    return _classes(value) >= 2 or len(value) >= 12


def _is_token_value(value: str) -> bool:
    """A value after ``token=`` or ``secret:``: long and random, not a word or a name."""
    if len(value) < 16 or _PLACEHOLDER.match(value):
        return False
    if _HEX_RUN.match(value):
        return True
    return _classes(value) >= 2 and _entropy(value) >= 3.5 and " " not in value


def _is_prose_password(value: str) -> bool:
    """The word after "the password is": a password when it looks like one."""
    value = value.strip("\"'`«»“”‘’()[]{}").rstrip(".,;:!?")
    if len(value) < 6 or value.lower() in _NOT_A_PASSWORD or _PLACEHOLDER.match(value):
        return False
    if value.isdigit():
        return len(value) >= 6  # a PIN or numeric code, not "12 characters"
    return _classes(value) >= 2


def _is_bare_aws_secret(value: str) -> bool:
    has = (any(c.islower() for c in value), any(c.isupper() for c in value))
    return all(has) and any(c.isdigit() for c in value) and _entropy(value) >= 4.3


@lru_cache(maxsize=1)
def _vendor_plugins() -> tuple[Any, ...]:
    """The detect-secrets plugins for vendor token shapes (entropy, keyword and IP
    plugins are left out: on prose they flag ordinary words and addresses)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    skip = {
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "KeywordDetector",
        "IPPublicDetector",
        # Our own rules name these; theirs would only add a second, vaguer finding.
        "AWSKeyDetector",
        "GitHubTokenDetector",
        "PrivateKeyDetector",
        "BasicAuthDetector",
        "JwtTokenDetector",
    }
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(cls() for cls in classes if cls.__name__ not in skip)


_MAX_LINE = 4096
"""Vendor plugins see at most this much of a line (their patterns are not all bounded)."""


def _scan(text: str, add: Callable[[str, int], None], line_of: Callable[[int], int]) -> None:
    """Every rule over ``text`` (already normalised); ``add(kind, line)`` records."""
    for kind, pattern in _SHAPES:
        for match in pattern.finditer(text):
            add(kind, line_of(match.start()))
    for match in _ASSIGNMENT.finditer(text):
        value = _assigned_value(match.group("value"))
        word = match.group("word").lower()
        if "pass" in word or word in ("pwd", "contraseña", "contrasena", "clave"):
            if _is_password_value(value):
                add("a password", line_of(match.start()))
        elif _is_token_value(value) or (
            word in ("secret", "api_key", "api-key", "apikey")
            and _is_password_value(value)
            and len(value) >= 12
        ):
            add("a secret key" if "key" in word or word == "secret" else "a token",
                line_of(match.start()))  # fmt: skip
    for match in _PROSE.finditer(text):
        if _is_prose_password(match.group("value")):
            add("a password", line_of(match.start()))
    for match in _COMMAND.finditer(text):
        value = match.group("glued") or match.group("spaced") or match.group("flag") or ""
        if _is_password_value(value.strip("'\"")):
            add("a password on a command line", line_of(match.start()))
    for match in _BARE_AWS_SECRET.finditer(text):
        if _is_bare_aws_secret(match.group(0)):
            add("an AWS secret key", line_of(match.start()))
    plugins = _vendor_plugins()
    offset = 0
    for line in text.split("\n"):
        start, offset = offset, offset + len(line) + 1
        if len(line) < 8:
            continue
        clipped = line[:_MAX_LINE]
        for plugin in plugins:
            for found in plugin.analyze_line(filename="memory.txt", line=clipped, line_number=1):
                add(f"a {found.type.lower()}", line_of(start))


def _decoded_runs(text: str) -> list[tuple[int, str]]:
    """(offset, decoded text) of every base64 run that decodes to readable text."""
    out: list[tuple[int, str]] = []
    for match in _BASE64_RUN.finditer(text):
        raw = match.group(0)
        padded = raw + "=" * (-len(raw) % 4)
        try:
            if "-" in raw or "_" in raw:
                data = base64.urlsafe_b64decode(padded)
            else:
                data = base64.b64decode(padded, validate=True)
            decoded = data.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        printable = sum(c.isprintable() or c in "\n\r\t" for c in decoded)
        if decoded and printable / len(decoded) > 0.95:
            out.append((match.start(), decoded))
    return out


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Every secret-shaped thing in ``text``, first line first (kinds only, no values)."""
    found: list[SecretFinding] = []
    seen: set[tuple[str, int]] = set()
    clean = normalise(text)

    def add(kind: str, line: int) -> None:
        if (kind, line) not in seen:
            seen.add((kind, line))
            found.append(SecretFinding(kind=kind, line=line))

    _scan(clean, add, lambda offset: clean.count("\n", 0, offset) + 1)
    for offset, decoded in _decoded_runs(clean):
        line = clean.count("\n", 0, offset) + 1
        inner = normalise(decoded)
        before = len(found)
        _scan(inner, add, lambda _offset, line=line: line)  # type: ignore[misc]
        if len(found) == before and ":" in inner and len(inner) <= 200:
            # user:password pairs (what Basic auth and many configs encode).
            user, _, secret = inner.partition(":")
            if user and " " not in user and _is_password_value(secret.strip()):
                add("an encoded credential", line)
    found.sort(key=lambda f: f.line)
    return tuple(found)
