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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ihmt_mcp._secret_lines import (
    CHECKED_VERSIONS,
    VENDOR_PLUGINS,
    keep_lines,
    plugin_can_match,
)

__all__ = ["SecretFinding", "find_secrets", "normalise"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretFinding:
    """A secret found in a text: what kind, and on which line (never the secret itself)."""

    kind: str
    """A plain name, e.g. ``a GitHub token`` or ``a private key``."""
    line: int
    """1-based line number."""
    last_line: int = field(default=0, compare=False)
    """The last line the secret's match runs to (``password =`` then the value on the
    next line); ``line`` itself when it holds one line, or 0 when not known."""


# Zero-width characters, the soft hyphen, the word joiner and the BOM: invisible, and
# used to split a token so that a pattern misses it.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]")


def normalise(text: str) -> str:
    """``text`` as a pattern should see it: NFKC, invisible characters removed.

    Lines stay lines (same count, same order), so a finding's line number is the line
    of the original text.
    """
    if text.isascii():
        return text  # NFKC leaves ASCII as it is, and every invisible character is not ASCII
    return "\n".join(
        _INVISIBLE.sub("", unicodedata.normalize("NFKC", line)) for line in text.split("\n")
    )


_SHAPES: tuple[tuple[str, frozenset[str], re.Pattern[str]], ...] = tuple(
    (kind, frozenset(needles.split()), re.compile(pattern))
    for kind, needles, pattern in (
        (
            "a private key",
            "private key",
            r"(?i)-----\s?BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?",
        ),
        # A key body without its header: DER of a key (MII…) or an OpenSSH key blob.
        ("a private key", "b3blbnnzac1rzxktdje", r"\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,}"),
        ("a private key", "mii", r"(?m)^\s{0,8}MII[A-Za-z0-9+/]{60,}={0,2}\s*$"),
        (
            "an AWS access key",
            "akia asia agpa aida aroa aipa anpa anva",
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}\b",
        ),
        (
            "an AWS secret key",
            "aws",
            r"(?i)aws_?secret_?(?:access_?)?key\W{0,3}[=:]\s{0,8}['\"]?[A-Za-z0-9/+=]{40}\b",
        ),
        ("a GitHub token", "ghp_ gho_ ghu_ ghs_ ghr_", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
        ("a GitHub token", "github_pat_", r"\bgithub_pat_[A-Za-z0-9_]{40,255}\b"),
        (
            "a GitLab token",
            "glpat- glptt- glrt- gldt- glsoat- glcbt- glimt- glft- glagent- gloas- glffct-",
            r"\bgl(?:pat|ptt|rt|dt|soat|cbt|imt|ft|agent|oas|ffct)-[A-Za-z0-9_-]{20,}",
        ),
        ("a GitLab token", "gr1348941", r"\bGR1348941[A-Za-z0-9_-]{20}"),
        ("a Slack token", "xox", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("a Slack token", "xapp-", r"\bxapp-\d-[A-Z0-9]{6,}-\d{6,}-[a-z0-9]{32,}"),
        (
            "a Slack webhook",
            "hooks.slack.com",
            r"(?i)https://hooks\.slack\.com/services/T\w{1,40}/B\w{1,40}/\w+",
        ),
        ("a Stripe key", "k_live_ k_test_", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),
        ("a Google API key", "aiza", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("a Google OAuth secret", "gocspx-", r"\bGOCSPX-[A-Za-z0-9_-]{28}"),
        ("an Anthropic API key", "sk-ant-", r"\bsk-ant-[a-z]{1,20}\d{0,4}-[A-Za-z0-9_-]{20,}"),
        (
            "an OpenAI API key",
            "sk-",
            r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]{0,200}\d)"
            r"(?=[A-Za-z0-9_-]{0,200}[A-Za-z])[A-Za-z0-9_-]{32,}",
        ),
        ("a Hugging Face token", "hf_", r"\bhf_[A-Za-z0-9]{34,}\b"),
        ("an npm token", "npm_", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("a PyPI token", "pypi-", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        ("a SendGrid key", "sg.", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
        ("a Twilio key", "sk", r"\bSK[0-9a-f]{32}\b"),
        (
            "a JSON Web Token",
            "eyj",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}",
        ),
        ("a bearer token", "bearer", r"(?i)\bbearer\s{1,8}[A-Za-z0-9._~+/-]{24,}=*"),
        # Vendors gitleaks lists, by their prefixes (bounded, so linear).
        ("a Google OAuth token", "ya29.", r"\bya29\.[A-Za-z0-9_-]{30,}"),
        ("an Azure SAS token", "sig=", r"[?&]sig=[A-Za-z0-9%+/]{30,}"),
        (
            "an Azure client secret",
            "q~",
            r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        ),
        ("an Alibaba Cloud key", "ltai", r"\bLTAI[A-Za-z0-9]{20}\b"),
        ("a DigitalOcean token", "_v1_", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
        ("a Heroku key", "hrku-", r"\bHRKU-[A-Za-z0-9_-]{60}"),
        ("a Cloudflare key", "v1.0-", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
        ("a Vault token", "hvs. hvb. hvr.", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"),
        (
            "a Terraform Cloud token",
            ".atlasv1.",
            r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        ),
        (
            "a Doppler token",
            "dp.pt. dp.st. dp.sa. dp.ct. dp.scim. dp.audit.",
            r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9._-]{40,}",
        ),
        ("a Pulumi token", "pul-", r"\bpul-[a-f0-9]{40}\b"),
        (
            "an Atlassian token",
            "atbb attt3 actt3",
            r"\b(?:ATBB[A-Za-z0-9_=.-]{28,}|AT[AC]TT3[A-Za-z0-9_=-]{100,})",
        ),
        ("a Docker Hub token", "dckr_", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}"),
        ("a RubyGems key", "rubygems_", r"\brubygems_[a-f0-9]{48}\b"),
        ("a Buildkite token", "bkua_", r"\bbkua_[a-f0-9]{40}\b"),
        ("a Postman key", "pmak-", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
        ("a SonarQube token", "sqp_ sqa_ squ_", r"\bsq[pau]_[a-f0-9]{40}\b"),
        ("a Stripe webhook secret", "whsec_", r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
        ("a Mailgun key", "key-", r"\bkey-[0-9a-f]{32}\b"),
        (
            "a Shopify token",
            "shpat_ shpss_ shpca_ shppa_",
            r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
        ),
        (
            "a Square token",
            "eaaa sq0",
            r"\b(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43})",
        ),
        ("a New Relic key", "nrak-", r"\bNRAK-[A-Z0-9]{27}\b"),
        ("a Sentry token", "sntry", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}"),
        (
            "a Grafana token",
            "glsa_ glc_",
            r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,})",
        ),
        ("a Databricks token", "dapi", r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
        ("a Linear key", "lin_api_", r"\blin_api_[A-Za-z0-9]{40}\b"),
        ("a Notion token", "ntn_ secret_", r"\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b"),
        ("a Figma token", "figd_ figo_ figu_", r"\bfig[dou]_[A-Za-z0-9_-]{40,}"),
        ("an Airtable token", "pat", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
        ("a Supabase token", "sbp_", r"\bsbp_[a-f0-9]{40}\b"),
        ("a PlanetScale token", "pscale_", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}"),
        ("a Dynatrace token", "dt0c01.", r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"),
        ("a Mapbox token", "sk.eyj", r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
        ("a Firebase key", "aaaa", r"\bAAAA[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{140}"),
        ("a Hugging Face token", "api_org_", r"\bapi_org_[A-Za-z0-9]{34}\b"),
        ("a Replicate token", "r8_", r"\br8_[A-Za-z0-9]{37}\b"),
        ("a Groq key", "gsk_", r"\bgsk_[A-Za-z0-9]{52}\b"),
        ("an xAI key", "xai-", r"\bxai-[A-Za-z0-9]{80}\b"),
        ("a Perplexity key", "pplx-", r"\bpplx-[A-Za-z0-9]{48}\b"),
        ("a private key", "putty-user-key-file-", r"\bPuTTY-User-Key-File-\d{1,2}:"),
        (
            "an age secret key",
            "age-secret-key-1",
            r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
        ),
        (
            "a password hash",
            "$apr1$ $2 {sha} $1$ $5$ $6$",
            r"(?:\$apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}"
            r"|(?<![\w$])[\w.@-]{1,64}:(?:\{SHA\}[A-Za-z0-9+/]{27}=|\$[156]\$[./A-Za-z0-9]{1,16}"
            r"\$[./A-Za-z0-9]{22,86}))",
        ),
        ("a TOTP seed", "otpauth://", r"otpauth://\S{0,300}?[?&]secret=[A-Za-z2-7]{16,}"),
        (
            "a seed phrase",
            "phrase words",
            r"(?i)\b(?:seed|recovery|mnemonic|backup|secret)\s(?:phrase|words)\b[^\n]{0,20}?"
            r"(?:\bis\b|:|=)\s{0,4}(?:[a-z]{3,8}\s){11,23}[a-z]{3,8}\b",
        ),
        (
            "a basic-auth credential",
            "authorization",
            r"(?i)\bauthorization\W{0,4}basic\s{1,8}[A-Za-z0-9+/]{8,}",
        ),
        (
            "a password inside a URL",
            "://",
            r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'\"]{0,200}:(?!\$\{|\{\{|\*+@|<)"
            r"[^\s/:@'\"]{3,200}@[\w.-]+",
        ),
    )
)

_NEEDLES = frozenset(needle for _, needles, _ in _SHAPES for needle in needles)
"""Lower-case substrings one of which a shape's match holds: no needle, no regex pass."""

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
    r"(?:[^.\n:=]|\.(?=\S)){0,60}?\s(?:is|was|are|es|era|será|sería|fue)\s{1,4}"
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
# Credential files written in a sentence: a .netrc line, a .pgpass line, a Wi-Fi QR code.
_CREDENTIAL_LINE = re.compile(
    r"(?i)\blogin\s{1,4}\S{1,200}\s{1,4}password\s{1,4}(?P<netrc>\S{1,200})"
    r"|(?<![\w.:-])[\w.*-]{1,253}:(?:\d{1,5}|\*):[\w.*-]{1,63}:[\w.*@-]{1,63}:"
    r"(?P<pgpass>[^\s:]{1,200})"
    r"|\bWIFI:(?:[^;\n]{0,100};){0,6}?P:(?P<wifi>[^;\n]{1,200})"
)
# A passphrase of plain words: "passphrase: correct horse battery staple".
_PASSPHRASE = re.compile(
    r"(?i)\b(?:pass\s?phrase|password|passwd|contraseña|contrasena|clave)\b"
    r"(?:\s{1,4}(?:is|was|es|era)\s{1,4}|\s{0,4}[:=]\s{0,4})"
    r"(?P<value>[^\W\d_]{2,14}(?:[ -][^\W\d_]{2,14}){2,9})(?=\s{0,4}(?:$|[.;,!?)\"'\n]))",
    re.MULTILINE,
)
# Words that make a phrase after "password:" a sentence rather than a passphrase.
_PHRASE_STOP = frozenset(
    """
    a an the in on at of for to from with by via about into is are was were be been has
    have had must should can could will would may might do does did not no yes never
    always only also and or but so if when then than as like it its this that these those
    my your our their his her here there each every per ask see check use set get
    stored saved kept hashed encrypted salted rotated changed reset required needed
    missing wrong invalid valid expired weak strong long short empty managed shared
    random minimum maximum characters chars letters digits words symbols numbers days
    weeks months hours minutes case sensitive manager policy field prompt same different
    el la los las un una de del en por para con sin es está y o que se
    """.split()  # noqa: SIM905 - a word list reads better as prose than as quoted items
)
# "the deploy token for staging is X", "API key for Mailjet: X", "use vault token X".
_PROSE_TOKEN = re.compile(
    r"(?i)\b(?:tokens?|secrets?|keys?|credentials?|pat|apikey)\b"
    r"(?P<gap>(?:\s{1,4}[\w.@'/-]{1,40}){0,4}?)"
    r"(?P<link>\s{1,4}(?:is|was|are|es|era)\s{1,4}|\s{0,4}[:=]\s{0,4}|\s{1,4})"
    r"(?P<value>[A-Za-z0-9_.+/=~-]{20,300})"
)
# Words before a hex value that make it an id, a digest or a commit, not a secret.
_HEX_IS_AN_ID = re.compile(
    r"(?i)\b(?:commit|sha\d*|hash|digest|checksum|revision|rev|id|fingerprint|build|md5)\b"
)
_UUID = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_WORD_PIECE = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")
# An Azure storage account key: 64 random bytes in base64, alone in a sentence. Not one
# after "sha512-" (an integrity hash) nor an SSH public key's body (AAAA…).
_BARE_AZURE_KEY = re.compile(r"(?<![A-Za-z0-9+/=_-])(?!AAAA)[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])")
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


def _readable_base64(value: str) -> bool:
    """True when ``value`` is base64 of readable text (ordinary data, scanned decoded)."""
    padded = value + "=" * (-len(value) % 4)
    try:
        if "-" in value or "_" in value:
            data = base64.urlsafe_b64decode(padded)
        else:
            data = base64.b64decode(padded, validate=True)
        decoded = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    printable = sum(c.isprintable() or c in "\n\r\t" for c in decoded)
    return len(decoded) >= 8 and printable / len(decoded) > 0.95


def _wordlike(value: str) -> bool:
    """True for names made of words: paths, identifiers, hostnames, CamelCase classes.

    Split at case changes and digits, a name gives long pieces ("Secrets", "Manager");
    random characters give pieces of one to three characters.
    """
    pieces = _WORD_PIECE.findall(value)
    return bool(pieces) and sum(map(len, pieces)) / len(pieces) >= 4


def _is_prose_token(value: str, gap: str, link: str) -> bool:
    """The string after "token for staging is": a token when it looks random."""
    value = value.rstrip(".,;:")
    if link.strip() == "" and gap.strip():
        return False  # "key ssh-ed25519 AAAA…": words, then a second word, is no link
    if len(value) < 20 or _PLACEHOLDER.match(value) or _UUID.match(value):
        return False
    bare = value[2:] if value[:2].lower() == "0x" else value
    if _HEX_RUN.match(bare):
        return len(bare) >= 32 and not _HEX_IS_AN_ID.search(gap)
    has = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
    )
    if not all(has) or _entropy(value) < 3.5 or _readable_base64(value.rstrip("=")):
        return False
    # Random letters of both cases can split into long pieces ("PAAQL", "Ifkurmd") and
    # pass for a name. A long name of English words without separators repeats its
    # letters (entropy under 4.3 bits) and holds a digit or two at most.
    entropy, digits = _entropy(value), sum(c.isdigit() for c in value)
    keylike = (
        value.isalnum() and len(value) >= 24 and (entropy >= 4.3 or (digits >= 3 and entropy >= 4))
    )
    return keylike or not _wordlike(value)


def _is_passphrase(value: str) -> bool:
    """Three or more plain words after "passphrase:", none of them a sentence's words."""
    words = re.split(r"[ -]", value.lower())
    return len(words) >= 3 and not any(w in _PHRASE_STOP for w in words)


def _is_bare_azure_key(value: str) -> bool:
    return _classes(value) >= 3 and not _readable_base64(value)


def _is_bare_aws_secret(value: str) -> bool:
    has = (any(c.islower() for c in value), any(c.isupper() for c in value))
    return (
        all(has)
        and any(c.isdigit() for c in value)
        and _entropy(value) >= 4.3
        and not _readable_base64(value)  # 30 bytes of a sentence, encoded
    )


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
        # Our shapes cover theirs (and more of each vendor's formats): one pass, not two.
        "GitLabTokenDetector",
        "OpenAIDetector",
        "PypiTokenDetector",
        "SendGridDetector",
        "SlackDetector",
        "SquareOAuthDetector",
        "StripeDetector",
    }
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(cls() for cls in classes if cls.__name__ not in skip)


_MAX_LINE = 4096
"""Vendor plugins see at most this much of a line (their patterns are not all bounded)."""


def _scan(
    text: str,
    add: Callable[[str, int, int], None],
    line_of: Callable[[int], int],
    hot: Sequence[bool] | None = None,
) -> None:
    """Every rule over ``text`` (already normalised); ``add(kind, line, last line)``
    records.
    The vendor plugins read only the lines ``hot`` marks on which one of them can match
    (:func:`~ihmt_mcp._secret_lines.plugin_can_match`), every line when ``hot`` is None;
    detect-secrets is imported on the first line they read.

    The last two rules are fallbacks for shapes nobody names (a random string after
    "token", 88 characters of base64): they speak only on a line no other rule found
    anything on, so a GitHub token is "a GitHub token", not also "a token".
    """
    named: set[int] = set()

    def note(kind: str, line: int, last: int = 0) -> None:
        named.add(line)
        add(kind, line, max(line, last))

    def lines(match: re.Match[str]) -> tuple[int, int]:
        return line_of(match.start()), line_of(max(match.start(), match.end() - 1))

    lower = text.lower()
    present = {needle for needle in _NEEDLES if needle in lower}
    for kind, needles, pattern in _SHAPES:
        if needles and present.isdisjoint(needles):
            continue  # a substring test is far cheaper than a regex pass
        for match in pattern.finditer(text):
            note(kind, *lines(match))
    for match in _ASSIGNMENT.finditer(text):
        value = _assigned_value(match.group("value"))
        word = match.group("word").lower()
        if "pass" in word or word in ("pwd", "contraseña", "contrasena", "clave"):
            if _is_password_value(value):
                note("a password", *lines(match))
        elif _is_token_value(value) or (
            word in ("secret", "api_key", "api-key", "apikey")
            and _is_password_value(value)
            and len(value) >= 12
        ):
            note("a secret key" if "key" in word or word == "secret" else "a token",
                *lines(match))  # fmt: skip
    for match in _PROSE.finditer(text):
        if _is_prose_password(match.group("value")):
            note("a password", *lines(match))
    for match in _COMMAND.finditer(text):
        value = match.group("glued") or match.group("spaced") or match.group("flag") or ""
        if _is_password_value(value.strip("'\"")):
            note("a password on a command line", *lines(match))
    for match in _CREDENTIAL_LINE.finditer(text):
        value = (match.group("netrc") or match.group("pgpass") or match.group("wifi") or "").rstrip(
            ".,;"
        )
        # These files expand nothing: "A0000000" there is a password, not a variable's name.
        if _is_password_value(value) or (
            len(value) >= 8 and _classes(value) >= 2 and value[0] not in "$<{%"
        ):
            note("a password", *lines(match))
    for match in _PASSPHRASE.finditer(text):
        if _is_passphrase(match.group("value")):
            note("a passphrase", *lines(match))
    for match in _BARE_AWS_SECRET.finditer(text):
        if _is_bare_aws_secret(match.group(0)):
            note("an AWS secret key", *lines(match))
    offset = 0
    for number, line in enumerate(text.split("\n")):
        start, offset = offset, offset + len(line) + 1
        if len(line) < 8 or (hot is not None and not hot[number]):
            continue
        if hot is not None and not plugin_can_match(line):
            continue  # hot for our own rules only: the plugins (and their import) wait
        clipped = line[:_MAX_LINE]
        for plugin in _vendor_plugins():
            for found in plugin.analyze_line(filename="memory.txt", line=clipped, line_number=1):
                note(f"a {found.type.lower()}", line_of(start))
    for match in _BARE_AZURE_KEY.finditer(text):
        at = line_of(match.start())
        if at not in named and _is_bare_azure_key(match.group(0)):
            note("an Azure storage key", *lines(match))
    for match in _PROSE_TOKEN.finditer(text):
        at = line_of(match.start())
        if at not in named and _is_prose_token(
            match.group("value"), match.group("gap"), match.group("link")
        ):
            note("a token", *lines(match))


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


@lru_cache(maxsize=1)
def _plugins_known() -> bool:
    """Whether every vendor plugin is one the triggers were checked against: known
    without importing detect-secrets when it is a release of :data:`CHECKED_VERSIONS`."""
    if _installed_version() in CHECKED_VERSIONS:
        return True
    return {type(plugin).__name__ for plugin in _vendor_plugins()} <= VENDOR_PLUGINS


def _installed_version() -> str:
    """detect-secrets' version, read from its ``__version__.py`` without importing the
    package ("" when it cannot be read)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("detect_secrets")
        folders = spec.submodule_search_locations if spec is not None else None
        if not folders:
            return ""
        text = (Path(next(iter(folders))) / "__version__.py").read_text("utf-8")
    except (ImportError, OSError, ValueError):
        return ""
    found = re.search(r"""^VERSION\s*=\s*['"]([^'"]+)['"]""", text, re.MULTILINE)
    return found.group(1) if found else ""


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Every secret-shaped thing in ``text``, first line first (kinds only, no values).

    Lines that cannot hold one are left out before the rules run (see
    :mod:`ihmt_mcp._secret_lines`): a file of code is mostly such lines.
    """
    return scan_text(text, prefilter=True)


def scan_text(text: str, *, prefilter: bool) -> tuple[SecretFinding, ...]:
    """:func:`find_secrets`, with the line prefilter or (``prefilter=False``) every rule
    over every line: the reference the prefilter is tested against."""
    found: dict[tuple[str, int], int] = {}
    clean = normalise(text)
    hot: list[bool] | None = None
    known = False
    if prefilter:
        known = _plugins_known()
        keep, hot = keep_lines(clean, every_plugin_known=known)
        if not all(keep):
            # A left-out line becomes one character no rule takes for a space or a word
            # (emptied, it would let ``^\s{0,8}MII`` start a key block lines earlier).
            clean = "\n".join(
                line if kept else "\x00" for line, kept in zip(clean.split("\n"), keep, strict=True)
            )

    def add(kind: str, line: int, last: int) -> None:
        found[kind, line] = max(found.get((kind, line), line), last)

    # With a plugin the triggers were not checked against, it reads every line.
    _scan(clean, add, lambda offset: clean.count("\n", 0, offset) + 1, hot if known else None)
    for offset, decoded in _decoded_runs(clean):
        line = clean.count("\n", 0, offset) + 1
        inner = normalise(decoded)
        before = len(found)
        _scan(inner, add, lambda _offset, line=line: line)  # type: ignore[misc]
        if len(found) == before and ":" in inner and len(inner) <= 200:
            # user:password pairs (what Basic auth and many configs encode).
            user, _, secret = inner.partition(":")
            secret = secret.strip()
            if (
                re.fullmatch(r"[\w.@+-]{1,64}", user)
                and not any(c.isspace() for c in secret)
                and _is_password_value(secret)
            ):
                add("an encoded credential", line, line)
    findings = [SecretFinding(kind=k, line=n, last_line=last) for (k, n), last in found.items()]
    findings.sort(key=lambda f: f.line)
    return tuple(findings)
