"""Finding secrets in text before it is saved: well-known key shapes, key blocks, passwords."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SecretFinding", "find_secrets"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretFinding:
    """A secret found in a text: what kind, and on which line (never the secret itself)."""

    kind: str
    """A plain name, e.g. ``a GitHub token`` or ``a private key``."""
    line: int
    """1-based line number."""


_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("an AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}\b"),
        (
            "an AWS secret key",
            r"(?i)aws_?secret_?(?:access_?)?key\W{0,3}[=:]\s*['\"]?[A-Za-z0-9/+=]{40}\b",
        ),
        ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
        ("a GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{40,255}\b"),
        ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("a Slack webhook", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/\w+"),
        ("a Stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("a Google OAuth secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}"),
        ("an Anthropic API key", r"\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{20,}"),
        (
            "an OpenAI API key",
            r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)"
            r"(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}",
        ),
        ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{34,}\b"),
        ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        ("a SendGrid key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
        ("a Twilio key", r"\bSK[0-9a-f]{32}\b"),
        ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}"),
        ("a bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{24,}=*"),
        (
            "a password inside a URL",
            r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'\"]+:(?!\$\{|\{\{|\*+@|<)[^\s/:@'\"]{3,}@[\w.-]+",
        ),
    )
)

_ASSIGNMENT = re.compile(
    r"(?i)(?<![\w-])(?P<key>password|passwd|passphrase|pwd|contraseña|clave|db_pass(?:word)?"
    r"|secret[_-]?key|client[_-]?secret|api[_-]?key|api[_-]?secret|access[_-]?token"
    r"|auth[_-]?token|private[_-]?key)['\"]?\s*(?::=|=>|[:=])\s*(?P<value>\S.*)$",
    re.MULTILINE,
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\**|x+|\.+|-+|_+|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|\$\{?[\w.:-]*\}?|%\(?\w*\)?s?|"
    r"none|null|nil|true|false|yes|no|required|optional|redacted|hidden|secret|password|"
    r"changeme_placeholder|your[\w-]*|example|todo|tbd|n/?a|env|"
    r"(?:os\.)?(?:environ|getenv)\b.*|process\.env\b.*|[A-Za-z_][\w.]*\(.*)$"
)


def _assigned_value(raw: str) -> str:
    raw = raw.strip()
    if raw[:1] in ("'", '"', "`"):
        quote = raw[0]
        end = raw.find(quote, 1)
        return raw[1:end] if end > 0 else ""
    return re.split(r"[\s,;)]", raw, maxsplit=1)[0]


def _is_password_value(value: str) -> bool:
    if len(value) < 4 or _PLACEHOLDER.match(value):
        return False
    # A bare lower-case word after "password:" in prose ("password: see the vault") is
    # a pointer, not a password; real passwords mix classes or are long.
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
    return classes >= 2 or len(value) >= 12


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Every secret-shaped thing in ``text``, first line first (kinds only, no values)."""
    found: list[SecretFinding] = []
    seen: set[tuple[str, int]] = set()

    def add(kind: str, offset: int) -> None:
        line = text.count("\n", 0, offset) + 1
        if (kind, line) not in seen:
            seen.add((kind, line))
            found.append(SecretFinding(kind=kind, line=line))

    for kind, pattern in _SHAPES:
        for match in pattern.finditer(text):
            add(kind, match.start())
    for match in _ASSIGNMENT.finditer(text):
        value = _assigned_value(match.group("value"))
        if _is_password_value(value):
            key = match.group("key").lower()
            kind = (
                "a password"
                if "pass" in key or key in ("pwd", "contraseña", "clave")
                else ("a secret key")
            )
            add(kind, match.start())
    found.sort(key=lambda f: f.line)
    return tuple(found)
