"""Which lines of a text can hold a secret: the cheap pass before the full scan.

Every rule of :mod:`ihmt_mcp._secrets` needs something on the line where its match
starts: a word ("password", "token", "key", "login"…), a vendor prefix that no long run
follows ("xoxb-", "eyJ", "sig=", "q~"…), or a run of at least 24 characters of a key's
alphabet (every generated key, every base64 body, every bare AWS or Azure secret, and
the token part of each detect-secrets vendor plugin we run). Those are found with
substring searches and a few regexes that start with a literal or a character class:
Python's ``re`` runs an alternation of many words about ten times slower than that, and a
run of 24 is found in the text's bytes mapped to two values.

A match may run on past its first line, over whitespace and a few words (``password =``
then the value on the next line; a seed phrase one word a line): each line with a
trigger keeps the line before it and the next :data:`FOLLOWING` non-blank lines
(:data:`FOLLOWING_PHRASE` after "seed phrase"). Every other line that holds anything
but whitespace becomes one NUL character, so the text keeps its line numbers and the
full scan runs on what is left. ``tests/test_secret_lines.py`` checks that the scan finds
the same secrets, on the same lines, with and without this pass, over the secret corpus;
``tools/bench/secret_formats.py`` does the same over its generated formats.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

__all__ = ["CHECKED_VERSIONS", "VENDOR_PLUGINS", "keep_lines", "plugin_can_match"]

FOLLOWING = 6
"""Non-blank lines after a trigger's line that a match may still reach (a "token for"
phrase of four words, each on its own line, then "is", then the value)."""
FOLLOWING_PHRASE = 26
"""The same after "seed phrase" (up to 24 words, one a line)."""

_WORDS = (
    # words of the assignment, prose and command-line rules
    *("pass", "pwd", "contrase", "clave", "secret", "token", "key", "credential", "auth"),
    *("login", "mysql", "mariadb", "psql", "redis-cli", "curl", "mongo", "wifi:", "bearer"),
    # vendor prefixes whose shortest match holds no run of 24
    *("xox", "hooks.slack.com", "eyj", "sig=", "q~", "dp.", "atbb", "attt3", "actt3"),
    *("whsec_", "sntry", "pscale_", "otpauth://", "{sha}", "atlasv1", "b3blbnnzac1rzxktdje"),
    *("akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva"),
)
_BOUNDED = re.compile(r"\b(?:pw|pin|pat)\b")
"""Short words the rules only take whole ("pw: x", "my pin is", "pat …")."""
_CASED = re.compile(
    r":(?:\d{1,5}|\*):"  # a .pgpass line
    r"|://[^\s@]{1,401}@"  # a password inside a URL
    r"|\$(?:apr1|2[aby]?|[156])\$"  # a password hash
    r"|AKC[A-Za-z0-9]{10}|AP[\dA-F][A-Za-z0-9]{8}"  # detect-secrets' Artifactory tokens
)


def _run_byte(byte: int) -> int:
    if byte >= 0x80 or chr(byte).isalnum() or chr(byte) in "_+/-":
        return ord("x")
    return byte if byte == ord("\n") else ord(" ")


_RUN_BYTES = bytes.maketrans(bytes(range(256)), bytes(_run_byte(b) for b in range(256)))
"""UTF-8 bytes to ``x`` (a byte of a key's alphabet, or of any character outside ASCII,
which covers what ``\\w`` and ``\\d`` take), newlines kept, all else a space."""
_RUN = b"x" * 24
"""A run of 24: the shortest key body, base64 run or vendor token the rules look for."""
_PHRASE = re.compile(r"(?:seed|recovery|mnemonic|backup|secret)\s$")
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i"})
"""``re`` ignores case by simple case folding: "İ" and "ı" match "i" there; ``str.lower``
would turn "İ" into two characters."""

VENDOR_PLUGINS = frozenset(
    {
        "ArtifactoryDetector",
        "AzureStorageKeyDetector",
        "CloudantDetector",
        "DiscordBotTokenDetector",
        "IbmCloudIamDetector",
        "IbmCosHmacDetector",
        "MailchimpDetector",
        "NpmDetector",
        "SoftlayerDetector",
        "TelegramBotTokenDetector",
        "TwilioKeyDetector",
    }
)
"""The detect-secrets plugins whose shapes the triggers above were checked against: a
plugin outside this set makes the scan read every line (see :func:`keep_lines`)."""
CHECKED_VERSIONS = frozenset({"1.5.0"})
"""The detect-secrets releases whose plugins are exactly :data:`VENDOR_PLUGINS`, with the
patterns :func:`plugin_can_match` was read from: with one of them installed, the scan
knows that without importing detect-secrets (and, through it, ``requests``)."""

_PLUGIN_WORDS = ("_authtoken", "accountkey")
"""The literal words of the two vendor patterns whose token may be shorter than a run of
24 or hold characters that break one (npm's ``//host/:_authToken=npm_…``, Azure's
``AccountKey=`` then 88 characters that may include ``=``)."""
_ARTIFACTORY = re.compile(r"AKC[A-Za-z0-9]{10}|AP[\dA-F][A-Za-z0-9]{8}")


def plugin_can_match(line: str) -> bool:
    """Whether a vendor plugin of :data:`VENDOR_PLUGINS` (as of :data:`CHECKED_VERSIONS`)
    can match on ``line`` (normalised): every one of their patterns needs a run of 24
    characters of a key's alphabet, Artifactory's short prefixes, or one of
    :data:`_PLUGIN_WORDS`. Most lines a trigger keeps ("tokens", "passed", "keyboard")
    hold none: the plugins, and the import of detect-secrets, are then skipped."""
    if _RUN in line.encode("utf-8", "surrogatepass").translate(_RUN_BYTES):
        return True
    lowered = line.lower()
    return any(word in lowered for word in _PLUGIN_WORDS) or bool(_ARTIFACTORY.search(line))


def keep_lines(text: str, *, every_plugin_known: bool = True) -> tuple[list[bool], list[bool]]:
    """``(keep, hot)``, one flag a line of ``text`` (already normalised).

    ``hot`` marks the lines that hold a trigger (where a vendor plugin can match);
    ``keep`` adds what a match starting there may reach, and every blank line (blank
    lines are free to scan, and a rule may start on one). With ``every_plugin_known``
    false, or when lower-casing changes the text's length, every line is kept and hot.
    """
    lines = text.split("\n")
    count = len(lines)
    folded = text.translate(_FOLD) if "\u0130" in text or "\u0131" in text else text
    lowered = folded.lower()
    if not every_plugin_known or len(lowered) != len(text):
        return [True] * count, [True] * count
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    hot: set[int] = set()
    phrase: set[int] = set()

    def line_at(offset: int) -> int:
        return bisect_right(starts, offset) - 1

    for word in _WORDS:
        at = lowered.find(word)
        while at >= 0:
            line = line_at(at)
            hot.add(line)
            # the rest of this line holds nothing new for this word
            at = lowered.find(word, starts[line + 1] if line + 1 < count else len(lowered))
    for word in ("phrase", "words"):
        at = lowered.find(word)
        while at >= 0:
            if _PHRASE.search(lowered, max(0, at - 12), at):
                phrase.add(line_at(at))
            at = lowered.find(word, at + 1)
    hot.update(line_at(match.start()) for match in _BOUNDED.finditer(lowered))
    hot.update(line_at(match.start()) for match in _CASED.finditer(text))
    marked = text.encode("utf-8", "surrogatepass").translate(_RUN_BYTES).split(b"\n")
    hot.update(line for line, row in enumerate(marked) if _RUN in row)
    keep = [not line.strip() for line in lines]
    blank = list(keep)
    for line in sorted(hot | phrase):
        if line:
            keep[line - 1] = True
        keep[line] = True
        reach = FOLLOWING_PHRASE if line in phrase else FOLLOWING
        after = line + 1
        while after < count and reach:
            keep[after] = True
            reach -= 0 if blank[after] else 1
            after += 1
    flags = [False] * count
    for line in hot:
        flags[line] = True
    return keep, flags
