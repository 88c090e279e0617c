from __future__ import annotations

import pytest

from ihmt_mcp._secrets import find_secrets

# Assembled at run time so this file itself never holds a secret-shaped literal.
_A = "a1B2c3D4e5"
SECRETS = [
    ("an AWS access key", "aws key AKIA" + "IOSFODNN7EXAMPLE" + " for backups"),
    (
        "an AWS secret key",
        "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    ),
    ("a GitHub token", "token ghp_" + _A * 4),
    ("a GitHub token", "github_pat_" + "11ABCDEFG0" + "_" + _A * 6),
    ("a GitLab token", "glpat-" + "xY9zW8vU7tS6rQ5pO4nM"),
    ("a Slack token", "xoxb-" + "1234567890-0987654321-" + _A),
    ("a Slack webhook", "https://hooks.slack.com/services/" + "T00000000/B00000000/" + _A * 2),
    ("a Stripe key", "sk_" + "live_" + _A * 3),
    ("a Google API key", "AIza" + "SyD-" + _A * 3 + "xyz12"),
    ("an OpenAI API key", "sk-proj-" + _A * 5),
    ("an OpenAI API key", "OPENAI_API_KEY=sk-" + _A * 5),
    ("an Anthropic API key", "sk-ant-" + "api03-" + _A * 5),
    (
        "a private key",
        "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----",
    ),
    ("a private key", "-----BEGIN " + "OPENSSH PRIVATE KEY-----"),
    (
        "a JSON Web Token",
        "eyJhbGciOiJIUzI1NiJ9."
        + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ("a password", "db password=Hunter2!xyz"),
    ("a password", "passwd: s3cr3tPass"),
    ("a password", 'PASSWORD = "correct-horse-battery-staple"'),
    ("a password", "la contraseña: Pa55word!"),
    ("a password inside a URL", "postgres://app:" + "Sup3rS3cret" + "@db01:5432/app"),
    ("a bearer token", "Authorization: Bearer " + _A * 4),
    ("a Hugging Face token", "hf_" + _A * 4),
]

NEAR_MISSES = [
    "We rotate the GitHub token every 90 days; it lives in 1Password.",
    "The password reset flow sends an email with a one-time link.",
    "password: <redacted>",
    "password=${DB_PASSWORD}",
    "password = os.environ['DB_PASSWORD']",
    "password: ****",
    "passwords must be hashed with bcrypt",
    "api_key = get_api_key()",
    "Use scikit-learn (sk-learn) for the baseline model.",
    "The AKIA prefix marks AWS access key ids.",
    "Stripe publishable keys start with pk_live_ and are public.",
    "postgres://app@db01:5432/app has no password in the URL.",
    "The JWT is signed with RS256 and expires after 15 minutes.",
    "ssh-keygen -t ed25519 writes the public key to id_ed25519.pub",
    "token budget: 400 tokens per leaf",
    "I live in Madrid and work at Globex.",
    "commit 3f9a2b7c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a fixed the race",
]


@pytest.mark.parametrize(("kind", "text"), SECRETS)
def test_every_secret_kind_is_found_and_named(kind: str, text: str) -> None:
    found = find_secrets(f"Setup notes.\n{text}\nThat is all.")
    assert kind in {f.kind for f in found}
    assert all(f.line == 2 for f in found if f.kind == kind)


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == ()


@pytest.mark.parametrize(
    "text",
    [
        # Random keys whose letters happen to run in long pieces of one case.
        "API key for the mail relay: twIm3wqeyos7VwjsJrmdnxIt29Iijn9q",
        "the deploy token for staging is HqAOUYONTHDdzJLc0igiasaBmAphatxu",
        "the deploy token for staging is UwCI2PAAQLTfbIfkurmdZYGQ0JHAJVDu",
    ],
)
def test_a_random_key_is_a_token_though_it_splits_into_long_pieces(text: str) -> None:
    assert [f.kind for f in find_secrets(text)] == ["a token"]


@pytest.mark.parametrize(
    "name",
    ["Ec2InstanceProfileForImageBuilder", "getAccessTokenFromRefreshToken", "SpringBootContext3"],
)
def test_a_long_name_after_token_is_not_one(name: str) -> None:
    assert find_secrets(f"The token for the build is {name}") == ()
