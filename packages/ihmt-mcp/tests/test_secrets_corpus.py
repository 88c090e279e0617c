"""A labelled corpus for the secret filter: every secret-like save the probe of issue #13
slipped through, our own, and sentences about secrets that hold none.

Both rates are measured and bounded: all positives found, no negative refused. Run with
``-s`` to see them printed.
"""

from __future__ import annotations

import base64
import random
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_mcp._secrets import find_secrets

# Assembled at run time so this file itself never holds a secret-shaped literal.
_HEX32 = "9f86d081884c7d659a2feaa0c55ad015"
_HEX64 = _HEX32 + "a3bf4f1b2b0b822cd15d6c15b0f00a08"
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
_AKIA = "AKIA" + "IOSFODNN7EXAMPLE"
_GHP = "ghp_" + "a1B2c3D4e5" * 4
_PEM = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----"
_KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj" + "MzEfYyjiWA4R"
_ZWSP = "\u200b"
_R = random.Random(27)
_ALNUM = string.ascii_letters + string.digits
_AZURE_KEY = base64.b64encode(_R.randbytes(64)).decode()
_VAULT = "hvs." + "".join(_R.choice(_ALNUM + "_-") for _ in range(86))
_NETRC = "".join(_R.choice(_ALNUM) for _ in range(20))
_WORDS = [
    "anchor",
    "bamboo",
    "canyon",
    "dolphin",
    "ember",
    "falcon",
    "glacier",
    "harbor",
    "island",
    "jasmine",
]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


POSITIVES: list[str] = [
    # the probe's misses (issue #13, D5)
    f"backup secret {_AWS_SECRET}",
    "-----begin " + "rsa private key-----\nabc",
    _KEY_BODY,
    "redis://:" + "hunter2" + "@cache:6379",
    f"MY_SERVICE_SECRET={_HEX32}",
    f"API_TOKEN={_HEX32}",
    f"token: {_HEX32}",
    f"webhook secret: {_HEX64}",
    "the wifi password is Kx9!mPq2",
    "the root password for stg-db-01 is bluebird42",
    "La contraseña del router es Xq7#pL9m",
    base64.b64encode(_PEM.encode()).decode(),
    base64.b64encode(f"{_AKIA}:{_AWS_SECRET}".encode()).decode(),
    "Authorization: Basic " + base64.b64encode(b"deploy:Tr0ub4dor&3").decode(),
    _GHP[:10] + _ZWSP + _GHP[10:],
    _fullwidth(_AKIA),
    "PGPASSWORD=" + "s3cr3t-Pg-99 psql -h db",
    "mysql -u root -p" + "Sup3rS3cret! app",
    "docker login -u ci -p " + "Xy7-pAss-w0rd registry.example.com",
    # the probe's misses (issue #27, D23)
    f"Backups go to globexbackups with storage account key {_AZURE_KEY} for now.",
    f"use vault token {_VAULT}",
    f"machine api.github.com login octocat password {_NETRC}",
    "passphrase: correct horse battery staple",
    # our own
    "my bank pin is 493817",
    "password was changed to Winter2026!",
    "La clave del wifi es Nar4nja-22",
    "mi contraseña es perro2025",
    "DB_PASS='Gh7#kd92LLq'",
    "export AWS_SECRET_ACCESS_KEY=" + _AWS_SECRET,
    "sshpass -p 'Qw3rty!9' ssh root@10.0.0.5",
    "curl -u admin --password Adm1n-P4ss https://x",
    "client_secret: " + "GOCSPX-" + "a1B2c3D4e5" * 2 + "abcdefgh",
    "the passphrase is correct-Horse-7",
    "Discord bot: " + "MTIzNDU2Nzg5MDEyMzQ1Njc4" + ".GhIjKl." + "a1B2c3D4e5" * 3 + "abcdefgh",
    "ftp://admin:" + "Pa55w0rd" + "@files.local/",
    "private_key = " + _HEX64,
    "the admin password was reset to Tr4mpoline!",
    "new vault passphrase: Blue-Otter-Canyon-42",
    "SLACK_BOT_TOKEN=" + "xoxb-" + "2048-" + "a1B2c3D4e5" * 2,
    "export DATABASE_URL=postgres://app:" + "s3cretPW9" + "@db:5432/app",
]

NEGATIVES: list[str] = [
    "Password manager is Keeper Cloud (family plan shared with Dana); each client gets a vault.",
    "The password rotation policy is quarterly for every service account.",
    "Nuestro gestor de contraseñas es Bitwarden, con una bóveda por cliente.",
    "The password reset flow sends an email with a one-time link.",
    "Passwords must be at least 12 characters and are hashed with argon2.",
    "The wifi password is on the fridge.",
    "The root password for stg-db-01 is stored in 1Password.",
    "the password is rotated every 90 days",
    "La contraseña del router está en la caja fuerte.",
    "La contraseña es obligatoria para entrar.",
    "My password is too weak, I should change it.",
    "password: <redacted>",
    "password=${DB_PASSWORD}",
    "password = os.environ['DB_PASSWORD']",
    "token: ${GITHUB_TOKEN}",
    "API_TOKEN=$API_TOKEN",
    "secret = settings.SECRET_KEY",
    "The API key is stored in the vault under payments/stripe.",
    "token budget: 400 tokens per leaf",
    "max_tokens: 1500",
    "commit 3f9a2b7c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a fixed the race",
    "image digest sha256:" + _HEX64,
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "See packages/ihmt-mcp/src/ihmt_mcp/_secrets.py for the rules.",
    "The AKIA prefix marks AWS access key ids.",
    "Use mysql -p to be prompted for the password.",
    "docker login asks for the password when -p is left out.",
    "postgres://app@db01:5432/app has no password in the URL.",
    "Basic auth is disabled; we use OAuth2 with PKCE.",
    "The secret to good paella is the socarrat.",
    "Secret Santa is on December 20th.",
    "Our pin is in the map at the corner of Calle Mayor.",
    "The password manager is Bitwarden.",
    "pw reset took 5 minutes",
    "We decided the token lifetime is 15 minutes.",
    "ssh-keygen -t ed25519 writes the public key to id_ed25519.pub",
    "The JWT is signed with RS256 and expires after 15 minutes.",
    "Base64 of 'hello world' is aGVsbG8gd29ybGQ=",
    "The release notes live at https://example.com/releases/2026/notes.html",
    "I live in Madrid and work at Globex; my manager is Ana.",
    "El pin del mapa está en la Plaza Mayor.",
    "Set PGPASSWORD in your shell before running the migration.",
    "Supercalifragilisticexpialidocious is a long word in the song.",
    '# A bare word after "password:" in prose ("password: see the vault") is a pointer',
    "La clave es practicar todos los días.",
    "The key is to keep it simple.",
    "token: the unit the model counts",
    "Version 2.0 of the API token service shipped on 2026-01-10.",
    "The password field is case-sensitive and at most 64 characters.",
    "Mi contraseña es muy larga y la guardo en Bitwarden.",
    "We store password hashes with argon2id (m=64MiB, t=3, p=4).",
    "ssh deploy@10.0.0.12 -p 2222 uses the key in the agent",
    "PASSWORD_MIN_LENGTH = 12",
    "passphrase: ask Dana, it is in the team vault",
    "Passphrases should be four or more random words.",
    "correct horse battery staple is the xkcd example of a passphrase.",
    "machine api.github.com login octocat (the password comes from the keychain)",
    "The .pgpass format is hostname:port:database:username:password.",
    "The staging host is 2001:db8:85a3::8a2e:370:7334 over IPv6.",
    "The key class is SecretsManagerClientV2Factory in the SDK.",
    "The Terraform state key is prod/network/terraform.tfstate.",
    "The API key id is 123e4567-e89b-42d3-a456-426614174000 (the key is in the vault).",
    f"npm integrity sha512-{_AZURE_KEY[:86]}== for lodash",
    "Our Vault tokens (hvs.…) expire after 768 hours.",
]


def _rates() -> tuple[float, float, list[str], list[str]]:
    missed = [t for t in POSITIVES if not find_secrets(t)]
    refused = [t for t in NEGATIVES if find_secrets(t)]
    detection = 1 - len(missed) / len(POSITIVES)
    false_positive = len(refused) / len(NEGATIVES)
    return detection, false_positive, missed, refused


def test_corpus_rates_all_known_secrets_found_and_no_sentence_refused() -> None:
    detection, false_positive, missed, refused = _rates()
    print(  # the measured rates, shown with -s
        f"\nsecret corpus: {len(POSITIVES)} positives, detection {detection:.1%}; "
        f"{len(NEGATIVES)} negatives, false positives {false_positive:.1%}"
    )
    assert missed == [], missed
    assert refused == [], refused


@pytest.mark.parametrize("text", POSITIVES)
def test_each_positive_is_refused_on_its_own_line(text: str) -> None:
    found = find_secrets(f"Setup notes.\n{text}\nThat is all.")
    assert found, text
    assert {f.line for f in found} <= set(range(2, 2 + text.count("\n") + 1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prefix=st.text(alphabet=string.ascii_letters + " ,.", max_size=40),
    splitter=st.sampled_from(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]),
    at=st.integers(min_value=1, max_value=39),
)
def test_an_invisible_character_anywhere_in_a_token_does_not_hide_it(
    prefix: str, splitter: str, at: int
) -> None:
    hidden = _GHP[:at] + splitter + _GHP[at:]
    assert find_secrets(f"{prefix} {hidden}")


@settings(max_examples=40, deadline=None)
@given(secret=st.sampled_from([_AKIA, _GHP, "redis://:" + "hunter2" + "@cache:6379"]))
def test_base64_and_fullwidth_forms_are_found(secret: str) -> None:
    assert find_secrets(base64.b64encode(secret.encode()).decode())
    assert find_secrets(_fullwidth(secret))


@settings(max_examples=80, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x2FFF), max_size=400
    )
)
def test_any_text_is_scanned_without_error_and_in_bounded_time(text: str) -> None:
    started = time.perf_counter()
    find_secrets(text)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    "unit",
    ["a", "password=", "password is ", "-p", "mysql ", "x:" * 2, "A1/", "ab+", "=" * 3, "://:"],
)
def test_a_long_adversarial_save_is_scanned_in_linear_time(unit: str) -> None:
    """200,000 characters (the save limit) of a repeated fragment take well under a second."""
    text = unit * (200_000 // len(unit))
    started = time.perf_counter()
    find_secrets(text)
    assert time.perf_counter() - started < 3.0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_an_azure_storage_key_or_a_vault_token_in_prose_is_found(seed: int) -> None:
    r = random.Random(seed)
    key = base64.b64encode(r.randbytes(64)).decode()
    vault = "hvs." + "".join(r.choice(_ALNUM + "_-") for _ in range(86))
    assert find_secrets(f"the account key is {key}, kept for the restore drill")
    assert find_secrets(f"Backups use {key} as their key.") or key.startswith("AAAA")
    assert find_secrets(f"use vault token {vault}")


@settings(max_examples=30, deadline=None)
@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=3, max_size=8, unique=True),
    word=st.sampled_from(["passphrase", "password", "pass phrase"]),
)
def test_a_passphrase_of_plain_words_is_found(words: list[str], word: str) -> None:
    assert find_secrets(f"{word}: {' '.join(words)}")


@settings(max_examples=30, deadline=None)
@given(
    netrc=st.text(alphabet=_ALNUM + "!#%&*", min_size=8, max_size=40).filter(
        # mixed, and not a "%s"-style placeholder
        lambda p: sum(map(str.isalpha, p)) and sum(map(str.isdigit, p)) and p[0].isalnum()
    )
)
def test_a_netrc_line_with_any_password_is_found(netrc: str) -> None:
    assert find_secrets(f"machine api.github.com login octocat password {netrc}")


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=string.ascii_lowercase + " .,;'", min_size=8, max_size=160))
def test_base64_of_ordinary_words_is_not_refused(text: str) -> None:
    encoded = base64.b64encode(text.encode()).decode()
    assert find_secrets(f"The payload (base64) is {encoded}") == ()
