"""The secret filter over a generated corpus: secret formats to refuse, sentences to keep.

    python tools/bench/secret_formats.py [--seed 27] [--out tools/bench/results/secrets.json]

Every secret here is made up in code from a seeded random generator, in the shape its
issuer uses (prefix, alphabet, length, checksum-free): no real credential, and no
secret-shaped literal in the repository either (a push-protection scanner would stop
it). gitleaks' rule list is the map of what exists: cloud keys, code hosts and CI,
SaaS and AI vendors, private key blocks, JSON Web Tokens, connection strings, ``.netrc``,
``.pgpass`` and ``htpasswd`` lines, basic-auth URLs, ``password=`` and ``secret:``
assignments, passwords and passphrases in plain prose. Each is one sentence as a person
would write it in a note.

Beside them, sentences ABOUT secrets that hold none (policies, pointers to a vault,
prefixes named in prose, commit hashes, UUIDs, digests, public keys, base64 of ordinary
data, long paths): a filter that refused them would make the memory useless for the
very notes a team needs.

It prints a table (formats caught, harmless sentences refused, the time of one scan)
and writes the same as JSON. ``promised`` formats are what the product promises to
refuse; a format listed as not promised is measured and shown, never asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# This file shares its name with the standard library's ``secrets``: run as a script,
# its folder is first on sys.path and would shadow that module for every import below.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import base64  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import string  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import asdict, dataclass  # noqa: E402
from typing import Any  # noqa: E402

from ihmt_mcp._secrets import find_secrets, scan_text  # noqa: E402

RESULTS = HERE / "results" / "secrets.json"

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
HEX = "0123456789abcdef"
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BASE32 = UPPER + "234567"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
# A few dozen dictionary words, for passphrases and seed phrases.
WORDS = """
    anchor bamboo canyon dolphin ember falcon glacier harbor island jasmine kettle lantern
    meadow nectar orbit pepper quartz raven saddle timber umbra velvet walnut yonder zephyr
    copper fossil marble thistle cobalt
""".split()  # noqa: SIM905 - a word list reads better as prose than as quoted items


@dataclass(frozen=True, slots=True, kw_only=True)
class Secret:
    """One secret format, in one sentence."""

    name: str
    """Short id of the format, e.g. ``github-pat``."""
    group: str
    """cloud, code, saas, ai, key, url, file, assignment, prose."""
    text: str
    """The sentence holding it."""
    promised: bool = True
    """True when the product promises to refuse it."""


class Gen:
    """Random pieces in the shapes issuers use, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        """``n`` characters of ``alphabet``, with upper, lower and digit present when the
        alphabet has them (a real token of this length nearly always does)."""
        while True:
            out = "".join(self.r.choice(alphabet) for _ in range(n))
            wanted = [cls for cls in (UPPER, LOWER, DIGITS) if set(cls) & set(alphabet)]
            if n < 12 or all(set(out) & set(cls) for cls in wanted):
                return out

    def b64(self, nbytes: int, *, urlsafe: bool = False, pad: bool = True) -> str:
        data = bytes(self.r.randrange(256) for _ in range(nbytes))
        out = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()
        return out if pad else out.rstrip("=")

    def words(self, n: int) -> str:
        return " ".join(self.r.sample(WORDS, n))

    def password(self) -> str:
        """A person's password: a word, digits and a symbol, mixed."""
        word = self.r.choice(WORDS).capitalize()
        return f"{word}{self.r.randrange(10, 99)}{self.r.choice('!#%&*')}{self.chars(ALNUM, 4)}"

    def jwt(self) -> str:
        def part(obj: dict[str, Any]) -> str:
            raw = json.dumps(obj, separators=(",", ":")).encode()
            return base64.urlsafe_b64encode(raw).decode().rstrip("=")

        header = part({"alg": "HS256", "typ": "JWT"})
        payload = part({"sub": str(self.r.randrange(10**9)), "exp": 1767225600})
        return f"{header}.{payload}.{self.b64(32, urlsafe=True, pad=False)}"

    def pem(self, label: str, lines: int = 4) -> str:
        body = "\n".join(self.b64(48) for _ in range(lines))
        dashes = "-" * 5
        return f"{dashes}BEGIN {label}{dashes}\n{body}\n{dashes}END {label}{dashes}"


def secret_formats(g: Gen) -> list[Secret]:
    """At least sixty formats, one sentence each, in a fixed order."""
    pw = g.password
    formats: list[tuple[str, str, Callable[[], str]]] = [
        # ---------------------------------------------------------------- cloud
        ("aws-access-key-id", "cloud",
         lambda: f"The backup user's access key id is AKIA{g.chars(UPPER + '234567', 16)}."),
        ("aws-secret-access-key", "cloud",
         lambda: f"and its secret access key is {g.chars(B64, 40)} (do not share)"),
        ("aws-session-token", "cloud",
         lambda: f"export AWS_SESSION_TOKEN=FwoGZXIvYXdzE{g.chars(B64, 280)}"),
        ("aws-credentials-file", "cloud",
         lambda: f"[default]\naws_access_key_id = ASIA{g.chars(UPPER + '234567', 16)}\n"
                 f"aws_secret_access_key = {g.chars(B64, 40)}"),
        ("gcp-api-key", "cloud",
         lambda: f"Maps works again with key AIza{g.chars(URLSAFE, 35)} on the staging site."),
        ("gcp-service-account", "cloud",
         lambda: '{"type": "service_account", "private_key": "'
                 + g.pem("PRIVATE KEY", 2).replace("\n", "\\n") + '"}'),
        ("gcp-oauth-client-secret", "cloud",
         lambda: f"OAuth client secret for the web app: GOCSPX-{g.chars(URLSAFE, 28)}"),
        ("gcp-access-token", "cloud",
         lambda: f"curl works with the access token ya29.{g.chars(URLSAFE, 120)} for an hour"),
        ("gcp-refresh-token", "cloud",
         lambda: f"refresh token: 1//0{g.chars(URLSAFE, 98)}"),
        ("azure-storage-key-prose", "cloud",
         lambda: f"Backups go to globexbackups with storage account key {g.b64(64)} for now."),
        ("azure-connection-string", "cloud",
         lambda: "DefaultEndpointsProtocol=https;AccountName=globexbackups;AccountKey="
                 f"{g.b64(64)};EndpointSuffix=core.windows.net"),
        ("azure-sas-url", "cloud",
         lambda: "Share https://globexbackups.blob.core.windows.net/exports?sv=2022-11-02&ss=b"
                 "&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig="
                 + urllib.parse.quote(g.b64(32), safe="")),
        ("azure-ad-client-secret", "cloud",
         lambda: f"the app registration's client secret is {g.chars(ALNUM, 3)}8Q~"
                 f"{g.chars(ALNUM + '_~.-', 34)}"),
        ("alibaba-access-key", "cloud",
         lambda: f"Aliyun access key LTAI{g.chars(ALNUM, 20)} is for the OSS bucket."),
        ("digitalocean-token", "cloud",
         lambda: f"doctl auth init with dop_v1_{g.chars(HEX, 64)}"),
        ("heroku-api-key", "cloud",
         lambda: f"HEROKU_API_KEY is HRKU-AA{g.chars(URLSAFE, 58)}"),
        ("cloudflare-origin-ca-key", "cloud",
         lambda: f"origin CA key v1.0-{g.chars(HEX, 24)}-{g.chars(HEX, 146)}"),
        ("vault-service-token", "cloud",
         lambda: f"use vault token hvs.{g.chars(ALNUM + '_-', 86)}"),
        ("vault-batch-token", "cloud",
         lambda: f"the CI job logs in with hvb.{g.chars(ALNUM + '_-', 120)}"),
        ("terraform-cloud-token", "cloud",
         lambda: f"TFC token {g.chars(ALNUM, 14)}.atlasv1.{g.chars(URLSAFE, 67)}"),
        ("doppler-token", "cloud",
         lambda: f"the service token is dp.st.prd.{g.chars(LOWER + DIGITS, 43)}"),
        ("pulumi-token", "cloud", lambda: f"PULUMI_ACCESS_TOKEN: pul-{g.chars(HEX, 40)}"),
        # ---------------------------------------------------------------- code hosts and CI
        ("github-classic-pat", "code",
         lambda: f"My GitHub token is ghp_{g.chars(ALNUM, 36)}, scoped to repo."),
        ("github-oauth-token", "code", lambda: f"the OAuth app got gho_{g.chars(ALNUM, 36)}"),
        ("github-app-token", "code",
         lambda: f"installation token ghs_{g.chars(ALNUM, 36)} expires in an hour"),
        ("github-fine-grained-pat", "code",
         lambda: f"new fine-grained PAT github_pat_{g.chars(ALNUM, 22)}_{g.chars(ALNUM, 59)}"),
        ("gitlab-pat", "code",
         lambda: f"GitLab personal token glpat-{g.chars(URLSAFE, 20)} for the mirror"),
        ("gitlab-pipeline-trigger", "code",
         lambda: f"trigger the pipeline with glptt-{g.chars(HEX, 40)}"),
        ("gitlab-runner-token", "code",
         lambda: f"the runner registered with glrt-{g.chars(URLSAFE, 20)}"),
        ("gitlab-deploy-token", "code",
         lambda: f"deploy token gldt-{g.chars(URLSAFE, 20)} pulls the registry"),
        ("bitbucket-app-password", "code",
         lambda: f"Bitbucket app password ATBB{g.chars(ALNUM, 32)}{g.chars(HEX.upper(), 8)}"),
        ("atlassian-api-token", "code",
         lambda: f"Jira API token: ATATT3xFfGF0{g.chars(URLSAFE, 170)}={g.chars(HEX.upper(), 8)}"),
        ("npm-token", "code", lambda: f"publish with npm_{g.chars(ALNUM, 36)} from CI"),
        ("pypi-token", "code",
         lambda: f"twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmc{g.chars(URLSAFE, 70)}"),
        ("dockerhub-pat", "code",
         lambda: f"docker hub access token dckr_pat_{g.chars(URLSAFE, 27)}"),
        ("rubygems-key", "code", lambda: f"gem push needs rubygems_{g.chars(HEX, 48)}"),
        ("buildkite-token", "code", lambda: f"Buildkite API token bkua_{g.chars(HEX, 40)}"),
        ("postman-key", "code",
         lambda: f"Postman key PMAK-{g.chars(HEX, 24)}-{g.chars(HEX, 34)}"),
        ("sonarqube-token", "code", lambda: f"sonar scanner token sqp_{g.chars(HEX, 40)}"),
        # ---------------------------------------------------------------- SaaS
        ("slack-bot-token", "saas",
         lambda: f"the bot token is xoxb-{g.chars(DIGITS, 12)}-{g.chars(DIGITS, 13)}-"
                 f"{g.chars(ALNUM, 24)}"),
        ("slack-user-token", "saas",
         lambda: f"xoxp-{g.chars(DIGITS, 12)}-{g.chars(DIGITS, 12)}-{g.chars(DIGITS, 13)}-"
                 f"{g.chars(HEX, 32)} is Dana's user token"),
        ("slack-app-token", "saas",
         lambda: f"socket mode app token xapp-1-A{g.chars(UPPER + DIGITS, 10)}-"
                 f"{g.chars(DIGITS, 13)}-{g.chars(HEX, 64)}"),
        ("slack-webhook", "saas",
         lambda: f"alerts post to https://hooks.slack.com/services/T{g.chars(UPPER + DIGITS, 8)}"
                 f"/B{g.chars(UPPER + DIGITS, 10)}/{g.chars(ALNUM, 24)}"),
        ("stripe-secret-key", "saas", lambda: f"Stripe live key sk_live_{g.chars(ALNUM, 99)}"),
        ("stripe-restricted-key", "saas",
         lambda: f"the restricted key rk_live_{g.chars(ALNUM, 99)} can only read charges"),
        ("stripe-webhook-secret", "saas",
         lambda: f"webhook signing secret whsec_{g.chars(ALNUM, 32)}"),
        ("twilio-api-key", "saas", lambda: f"Twilio API key SK{g.chars(HEX, 32)}"),
        ("twilio-auth-token", "saas",
         lambda: f"twilio auth token: {g.chars(HEX, 32)}"),
        ("sendgrid-key", "saas",
         lambda: f"SendGrid key SG.{g.chars(URLSAFE, 22)}.{g.chars(URLSAFE, 43)} sends mail"),
        ("mailgun-key", "saas", lambda: f"Mailgun private key key-{g.chars(HEX, 32)}"),
        ("mailchimp-key", "saas",
         lambda: f"Mailchimp API key {g.chars(HEX, 32)}-us{g.r.randrange(1, 21)}"),
        ("shopify-access-token", "saas",
         lambda: f"Shopify admin token shpat_{g.chars(HEX, 32)}"),
        ("shopify-shared-secret", "saas", lambda: f"app shared secret shpss_{g.chars(HEX, 32)}"),
        ("square-access-token", "saas",
         lambda: f"Square production token EAAA{g.chars(URLSAFE, 60)}"),
        ("discord-bot-token", "saas",
         lambda: f"Discord bot: M{g.chars(ALNUM, 25)}.{g.chars(URLSAFE, 6)}."
                 f"{g.chars(URLSAFE, 38)}"),
        ("telegram-bot-token", "saas",
         lambda: f"telegram bot {g.r.randrange(10**8, 10**9)}:AA{g.chars(URLSAFE, 33)}"),
        ("newrelic-user-key", "saas", lambda: f"New Relic key NRAK-{g.chars(UPPER + DIGITS, 27)}"),
        ("sentry-auth-token", "saas",
         lambda: f"SENTRY_AUTH_TOKEN is sntrys_eyJpYXQiOjE3{g.chars(B64, 80)}_"
                 f"{g.chars(ALNUM, 43)}"),
        ("grafana-service-account", "saas",
         lambda: f"Grafana token glsa_{g.chars(ALNUM, 32)}_{g.chars(HEX, 8)}"),
        ("databricks-token", "saas", lambda: f"Databricks PAT dapi{g.chars(HEX, 32)}"),
        ("linear-api-key", "saas", lambda: f"Linear key lin_api_{g.chars(ALNUM, 40)}"),
        ("notion-token", "saas", lambda: f"Notion integration ntn_{g.chars(ALNUM, 46)}"),
        ("figma-token", "saas", lambda: f"Figma PAT figd_{g.chars(URLSAFE, 40)}"),
        ("airtable-pat", "saas",
         lambda: f"Airtable token pat{g.chars(ALNUM, 14)}.{g.chars(HEX, 64)}"),
        ("supabase-token", "saas", lambda: f"supabase access token sbp_{g.chars(HEX, 40)}"),
        ("planetscale-token", "saas",
         lambda: f"PlanetScale service token pscale_tkn_{g.chars(URLSAFE, 43)}"),
        ("dynatrace-token", "saas",
         lambda: f"Dynatrace API token dt0c01.{g.chars(UPPER + DIGITS, 24)}."
                 f"{g.chars(UPPER + DIGITS, 64)}"),
        ("mapbox-secret-token", "saas",
         lambda: f"Mapbox secret token sk.eyJ1Ijoi{g.chars(URLSAFE, 40)}.{g.chars(URLSAFE, 22)}"),
        ("firebase-server-key", "saas",
         lambda: f"FCM server key AAAA{g.chars(URLSAFE, 7)}:APA91b{g.chars(URLSAFE, 134)}"),
        # ---------------------------------------------------------------- AI vendors
        ("openai-project-key", "ai",
         lambda: f"OpenAI key sk-proj-{g.chars(URLSAFE, 74)}T3BlbkFJ{g.chars(URLSAFE, 74)}"),
        ("openai-legacy-key", "ai",
         lambda: f"old OpenAI key sk-{g.chars(ALNUM, 20)}T3BlbkFJ{g.chars(ALNUM, 20)}"),
        ("anthropic-api-key", "ai",
         lambda: f"Claude key sk-ant-api03-{g.chars(URLSAFE, 93)}AA"),
        ("anthropic-admin-key", "ai",
         lambda: f"admin key sk-ant-admin01-{g.chars(URLSAFE, 93)}AA"),
        ("huggingface-token", "ai",
         lambda: f"HF token hf_{g.chars(ALNUM, 34)} for the gated model"),
        ("huggingface-org-token", "ai", lambda: f"org token api_org_{g.chars(ALNUM, 34)}"),
        ("replicate-token", "ai", lambda: f"REPLICATE_API_TOKEN={'r8_'}{g.chars(ALNUM, 37)}"),
        ("groq-key", "ai", lambda: f"Groq key gsk_{g.chars(ALNUM, 52)}"),
        ("xai-key", "ai", lambda: f"Grok key xai-{g.chars(ALNUM, 80)}"),
        ("perplexity-key", "ai", lambda: f"Perplexity key pplx-{g.chars(ALNUM, 48)}"),
        # ---------------------------------------------------------------- keys and tokens
        ("jwt", "key", lambda: f"The session JWT was {g.jwt()} when it failed."),
        ("rsa-private-key", "key", lambda: g.pem("RSA PRIVATE KEY")),
        ("openssh-private-key", "key",
         lambda: g.pem("OPENSSH PRIVATE KEY").replace(
             "\n", "\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU", 1)),
        ("ec-private-key", "key", lambda: "the signing key:\n" + g.pem("EC PRIVATE KEY", 2)),
        ("pgp-private-key", "key", lambda: g.pem("PGP PRIVATE KEY BLOCK")),
        ("encrypted-private-key", "key", lambda: g.pem("ENCRYPTED PRIVATE KEY")),
        ("private-key-body-only", "key",
         lambda: "key body without its header:\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
                 + g.chars(B64, 60)),
        ("putty-private-key", "key",
         lambda: "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
                 f"Public-Lines: 2\n{g.b64(48)}\nPrivate-Lines: 1\n{g.b64(48)}"),
        ("age-secret-key", "key",
         lambda: f"age identity AGE-SECRET-KEY-1{g.chars(BECH32, 58).upper()}"),
        ("ethereum-private-key", "key",
         lambda: f"the hot wallet's private key is 0x{g.chars(HEX, 64)}"),
        ("seed-phrase", "key",
         lambda: f"wallet recovery phrase: {g.words(12)}"),
        ("totp-seed", "key",
         lambda: f"otpauth://totp/Globex:dana?secret={g.chars(BASE32, 32)}&issuer=Globex"),
        # ---------------------------------------------------------------- URLs and strings
        ("postgres-url", "url",
         lambda: f"DATABASE_URL=postgres://app:{pw()}@db01.internal:5432/app"),
        ("mongodb-url", "url",
         lambda: f"mongo lives at mongodb+srv://admin:{g.chars(ALNUM, 16)}"
                 "@cluster0.x1y2z.mongodb.net"),
        ("redis-url", "url", lambda: f"cache is redis://:{g.chars(ALNUM, 20)}@cache01:6379/0"),
        ("amqp-url", "url",
         lambda: f"queue: amqp://orders:{g.chars(ALNUM, 14)}@mq.internal:5672/prod"),
        ("basic-auth-url", "url",
         lambda: f"the dashboard is https://admin:{pw()}@grafana.globex.net/d/ops"),
        ("git-credential-url", "url",
         lambda: f"https://oauth2:{g.chars(URLSAFE, 20)}@gitlab.globex.net/platform/api.git"),
        ("jdbc-password", "url",
         lambda: f"jdbc:postgresql://db01:5432/app?user=app&password={pw()}&ssl=true"),
        ("ado-connection-string", "url",
         lambda: "Server=tcp:globex.database.windows.net,1433;Database=app;User ID=sa;"
                 f"Password={pw()};Encrypt=true;"),
        # ---------------------------------------------------------------- credential files
        ("netrc-line", "file",
         lambda: f"machine api.github.com login octocat password {g.chars(ALNUM, 20)}"),
        ("pgpass-line", "file",
         lambda: f"my .pgpass has db01.internal:5432:app:app_user:{pw()}"),
        ("htpasswd-apr1", "file",
         lambda: f"htpasswd entry admin:$apr1${g.chars(ALNUM, 8)}${g.chars(ALNUM + './', 22)}"),
        ("htpasswd-bcrypt", "file",
         lambda: f"ops:$2y$10${g.chars(ALNUM + './', 53)}"),
        ("docker-config-auth", "file",
         lambda: '{"auths": {"registry.globex.net": {"auth": "'
                 + base64.b64encode(f"ci:{pw()}".encode()).decode() + '"}}}'),
        ("k8s-secret-data", "file",
         lambda: "kind: Secret\ndata:\n  password: "
                 + base64.b64encode(pw().encode()).decode()),
        ("wifi-qr", "file",
         lambda: f"guest wifi QR: WIFI:T:WPA;S:Globex-Guest;P:{pw()};;"),
        # ---------------------------------------------------------------- assignments
        ("password-assignment", "assignment", lambda: f"db password={pw()}"),
        ("secret-yaml", "assignment", lambda: f"secret: {g.chars(ALNUM, 32)}"),
        ("env-db-password", "assignment", lambda: f"DB_PASSWORD='{pw()}'"),
        ("client-secret", "assignment", lambda: f"client_secret = \"{g.chars(URLSAFE, 40)}\""),
        ("django-secret-key", "assignment",
         lambda: f"SECRET_KEY = 'django-insecure-{g.chars(ALNUM + '!@#%^&*(-_=+)', 50)}'"),
        ("api-key-header", "assignment", lambda: f"X-Api-Key: {g.chars(HEX, 32)}"),
        ("mysql-command", "assignment", lambda: f"mysql -u root -p{pw()} app"),
        ("sshpass-command", "assignment", lambda: f"sshpass -p '{pw()}' ssh deploy@10.0.0.5"),
        ("bearer-header", "assignment",
         lambda: f"curl -H 'Authorization: Bearer {g.chars(ALNUM, 40)}' https://api.globex.net"),
        ("basic-auth-header", "assignment",
         lambda: "Authorization: Basic " + base64.b64encode(f"deploy:{pw()}".encode()).decode()),
        # ---------------------------------------------------------------- prose
        ("password-prose", "prose", lambda: f"the wifi password is {pw()}"),
        ("password-prose-es", "prose", lambda: f"la contraseña del router es {pw()}"),
        ("ssh-password-prose", "prose",
         lambda: f"ssh password for deploy@10.0.0.5 is {pw()}"),
        ("passphrase-words", "prose", lambda: f"passphrase: {g.words(4)}"),
        ("passphrase-prose", "prose", lambda: f"the disk passphrase is {g.words(5)}"),
        ("pin-prose", "prose", lambda: f"my bank pin is {g.r.randrange(100000, 999999)}"),
        ("token-prose", "prose",
         lambda: f"the deploy token for staging is {g.chars(ALNUM, 32)}"),
        ("api-key-prose", "prose",
         lambda: f"API key for Mailjet: {g.chars(ALNUM, 32)}"),
    ]  # fmt: skip
    return [Secret(name=name, group=group, text=make()) for name, group, make in formats]


def harmless_sentences(g: Gen) -> list[str]:
    """Sentences about secrets, keys and ids that hold no secret."""
    commit = g.chars(HEX, 40)
    sha256 = g.chars(HEX, 64)
    ordinary = "The meeting moved to Thursday at 10:00; Dana brings the slides."
    config = json.dumps({"name": "payments", "replicas": 3, "region": "eu-west-1"})
    return [
        "Rotate the AWS keys every 90 days.",
        "The GitHub token lives in 1Password under 'CI deploy'.",
        "Password policy is 12 characters minimum with one symbol.",
        "The password manager is Bitwarden, one vault per client.",
        "Passphrases should be four or more random words.",
        "passphrase: ask Dana, it is in the team vault",
        "The wifi password is on the fridge.",
        "The root password for stg-db-01 is stored in 1Password.",
        "password: <redacted>",
        "password=${DB_PASSWORD}",
        "client_secret: ${GOOGLE_CLIENT_SECRET}",
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
        "postgres://app@db01:5432/app has no password in the URL.",
        "PASSWORD_MIN_LENGTH = 12",
        "The .env.example lists STRIPE_SECRET_KEY= with no value.",
        "SECRET_KEY is read from the environment in settings.py.",
        "The token lifetime is 15 minutes; refresh tokens last 30 days.",
        "The token budget is 400 tokens per leaf.",
        "Tokens per second went from 41 to 58 after the upgrade.",
        "Slack tokens start with xoxb- for bots and xoxp- for users.",
        "Stripe secret keys start with sk_live_ and publishable ones with pk_live_.",
        "The AWS access key id format is AKIA followed by 16 characters.",
        "Our Vault tokens (hvs.…) expire after 768 hours.",
        "SendGrid API keys begin with SG. and are 69 characters long.",
        "Vault's root token was revoked after setup, as the docs advise.",
        "The secret to good paella is the socarrat.",
        "Secret Santa is on December 20th.",
        "API keys go in the X-Api-Key header, never in the URL.",
        "curl -H 'Authorization: Bearer $TOKEN' https://api.globex.net/v1/orders",
        "Use mysql -p to be prompted for the password.",
        "Use `ssh-keygen -p -f ~/.ssh/id_ed25519` to change a key's passphrase.",
        "The .netrc file must be chmod 600 or curl ignores it.",
        "machine api.github.com login octocat (the password comes from the keychain)",
        "The .pgpass format is hostname:port:database:username:password.",
        "htpasswd files live in /etc/nginx/htpasswd.d/, one per site.",
        "The basic-auth realm is 'Globex staging'.",
        "Connection string: Server=db01;Database=app;Integrated Security=true;",
        "jdbc:postgresql://db01:5432/app?user=app&ssl=true",
        "The Kubernetes secret is named stripe-api-key in the payments namespace.",
        "The signing secret is kept in AWS Secrets Manager as prod/stripe/webhook.",
        "The Terraform state key is prod/network/terraform.tfstate.",
        "The S3 object key is uploads/2026/01/invoice-4411.pdf.",
        "The key rotation runbook is docs/runbooks/API-Key-Rotation-2026.md.",
        "The encryption key is derived with HKDF-SHA256 from the master secret.",
        "The API key for Mailjet is in the team vault under mailjet/prod.",
        "The license key field accepts 25 characters in groups of five.",
        "The access token endpoint is https://auth.globex.net/oauth2/v1/token.",
        "The JWKS at https://auth.globex.net/.well-known/jwks.json publishes public keys.",
        "The JWT header eyJhbGciOiJIUzI1NiJ9 says HS256.",
        "Our TOTP codes are 6 digits and rotate every 30 seconds.",
        "My bank PIN has 4 digits.",
        "The meeting PIN is in the calendar invite.",
        "correct horse battery staple is the xkcd example of a passphrase.",
        f"The fix landed in commit {commit}.",
        f"The token refresh bug was fixed in {commit[:12]}.",
        f"Full SHA of the release tag: {g.chars(HEX, 40)}",
        f"The image digest is sha256:{sha256}.",
        f"md5 of the backup is {g.chars(HEX, 32)}",
        f"request id {uuid.UUID(int=g.r.getrandbits(128), version=4)} failed at 10:02",
        f"The API key id is {uuid.UUID(int=g.r.getrandbits(128), version=4)} (the key is "
        "in the vault).",
        f"The payload in base64 is {base64.b64encode(ordinary.encode()).decode()}",
        f"The config blob (base64) is {base64.b64encode(config.encode()).decode()}",
        "Base64 of 'hello world' is aGVsbG8gd29ybGQ=",
        f"npm integrity sha512-{g.b64(64)} for lodash 4.17.21",
        f"My public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.chars(B64, 43)} dana@laptop",
        "The cache lives at /var/lib/ihmt/projects/globex-payments/index/2026-01-10/segments.",
        "/Users/dana/Library/Application Support/Code/User/globalStorage/state.vscdb "
        "holds VS Code's state.",
        "The secrets module is packages/ihmt-mcp/src/ihmt_mcp/_secrets.py.",
        "The key class is SecretsManagerClientV2Factory in the SDK.",
        "arn:aws:iam::123456789012:role/DeployRole-Production runs the deploys.",
        "The AWS account id is 123456789012 and the region eu-west-1.",
        "The staging host is 2001:db8:85a3::8a2e:370:7334 over IPv6.",
        "Release v2.14.3-rc.1+build.20260110.3f9a2b7 went out on Monday.",
        "The OAuth client id is 1234567890-abcdefghijklmnopqrstuv0123.apps.googleusercontent.com",
        "https://github.com/globex/payments/pull/4411#discussion_r1234567890",
        "Password reset emails go out from no-reply@globex.com.",
        "The passphrase for the shared drive was changed last week; ask Ana.",
        "kubectl create secret generic db-pass --from-file=./password.txt",
        "export GITHUB_TOKEN=$(gh auth token)",
        "La contraseña del router está en la caja fuerte.",
    ]


def scan_ms(texts: list[str], repeat: int = 5) -> float:
    """Median milliseconds of one ``find_secrets`` over one of ``texts``."""
    times = []
    for _ in range(repeat):
        for text in texts:
            started = time.perf_counter()
            find_secrets(text)
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


CODE = "def area(width, height):\n    return width * height\n\n\nclass Shape:\n    pass\n"
"""Code around each text when the line prefilter is checked (its lines are left out)."""


def prefilter_differs(texts: list[str]) -> list[str]:
    """Texts the scan reads differently with the line prefilter than without, each
    placed in a file of code and also split one word a line (must be none)."""
    out = []
    for text in texts:
        for form in (text, text.replace(" ", "\n")):
            placed = f"{CODE}{form}\n{CODE}"
            if scan_text(placed, prefilter=True) != scan_text(placed, prefilter=False):
                out.append(form[:120])
    return out


def run(seed: int) -> dict[str, Any]:
    g = Gen(seed)
    formats = secret_formats(g)
    harmless = harmless_sentences(g)
    find_secrets("warm the vendor plugins up")
    missed = [f for f in formats if not find_secrets(f.text)]
    refused = [
        {"text": text, "kinds": sorted({x.kind for x in find_secrets(text)})}
        for text in harmless
        if find_secrets(text)
    ]
    promised = [f for f in formats if f.promised]
    return {
        "seed": seed,
        "formats": len(formats),
        "caught": len(formats) - len(missed),
        "promised": len(promised),
        "promised_missed": [f.name for f in missed if f.promised],
        "missed": [asdict(f) | {"text": f.text[:120]} for f in missed],
        "harmless": len(harmless),
        "false_refusals": refused,
        "prefilter_differs": prefilter_differs([f.text for f in formats] + harmless),
        "scan_ms_median": round(scan_ms([f.text for f in formats] + harmless), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    report = run(args.seed)
    caught, formats = report["caught"], report["formats"]
    refused, harmless = len(report["false_refusals"]), report["harmless"]
    rows = [
        "| set | items | result |",
        "|---|---:|---|",
        f"| secret formats | {formats} | caught {caught}/{formats} ({caught / formats:.1%}) |",
        f"| promised formats | {report['promised']} | missed {len(report['promised_missed'])} |",
        f"| harmless sentences | {harmless} | false refusals {refused}/{harmless} "
        f"({refused / harmless:.1%}) |",
        f"| line prefilter | {formats + harmless} | read differently "
        f"{len(report['prefilter_differs'])} |",
        f"| one scan | — | median {report['scan_ms_median']} ms |",
    ]
    for row in rows:
        print(row)
    for miss in report["missed"]:
        print(f"missed {miss['name']}: {miss['text']!r}")
    for wrong in report["false_refusals"]:
        print(f"refused {wrong['text']!r} as {', '.join(wrong['kinds'])}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
