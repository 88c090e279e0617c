"""A deterministic generator of agent memories and the queries that judge a memory search.

``generate(size, seed)`` builds ``size`` memories (50 to 50,000) of the kinds an agent
saves — decisions with their reasons, environment facts about hosts, user preferences,
people, project facts, later corrections of earlier facts, and distractor notes that
reuse the same project, host and component words — and a few hundred queries:

- ``targeted``: one memory is the answer. Phrased differently from the memory (other
  verbs, question form), naming it either by its unique detail (``names_memory``) or by
  a combination of subject words that only that memory holds.
- ``update``: asks for the current value of something that was corrected; the newest
  memory of the chain is expected first and the superseded one flagged outdated.
- ``ambiguous``: a bare first name shared by at least three people.
- ``never_stored``: about something the store never heard of, worded with some of the
  store's vocabulary; the answer should be "not found".

Everything is seeded and pure standard library, so a corpus is the same on every
machine. Every memory carries one unique detail (a ticket number, a port, a codename,
a badge number…) whose token occurs in no other memory, and every subject-only query is
checked against the whole corpus: no other memory holds all of its subject words, so a
lexical search can answer every query this module emits.

    python tools/bench/_memories.py --size 500 --show 3
"""

from __future__ import annotations

import argparse
import random
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date

__all__ = [
    # records
    "Memory",
    "Query",
    "Corpus",
    # the generator
    "generate",
    "detail_token",
    # kinds and statuses
    "MEMORY_KINDS",
    "QUERY_KINDS",
    "FOUND",
    "AMBIGUOUS",
    "NOT_FOUND",
]

# ------------------------------------------------------------------ records

FOUND = "found"
AMBIGUOUS = "ambiguous"
NOT_FOUND = "not_found"

DECISION = "decision"
ENVIRONMENT = "environment"
PREFERENCE = "preference"
PERSON = "person"
PROJECT = "project"
CORRECTION = "correction"
DISTRACTOR = "distractor"
MEMORY_KINDS = (DECISION, ENVIRONMENT, PREFERENCE, PERSON, PROJECT, CORRECTION, DISTRACTOR)

TARGETED = "targeted"
UPDATE = "update"
AMBIGUOUS_QUERY = "ambiguous"
NEVER_STORED = "never_stored"
QUERY_KINDS = (TARGETED, UPDATE, AMBIGUOUS_QUERY, NEVER_STORED)

MIN_SIZE = 50
MAX_SIZE = 50_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Memory:
    """One thing an agent saved."""

    id_hint: str
    """Stable name inside the corpus (``m00042``); a system maps it to its own id."""
    text: str
    date: str
    """ISO date (``2024-03-11``) the memory was saved; corrections are dated later."""
    project: str | None
    """The project it was saved in, or None for a global memory."""
    kind: str
    """One of ``MEMORY_KINDS``."""
    supersedes: str | None
    """For a correction: the ``id_hint`` of the earlier memory it corrects."""
    unique: str
    """The detail only this memory carries, as written in the text (``OPS-48213``)."""
    subject: str = ""
    """What the memory is about (``env:falcon:staging:database``); shared along a
    correction chain."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """One question and the answer a good memory gives."""

    text: str
    kind: str
    """One of ``QUERY_KINDS``."""
    expected: str | None
    """``id_hint`` expected first (targeted, update); None otherwise."""
    expected_status: str
    """``found``, ``ambiguous`` or ``not_found``."""
    names_memory: bool = False
    """True when the query carries the expected memory's unique detail: answering
    ``not_found`` or ``ambiguous`` to it is a false abstention."""
    outdated: tuple[str, ...] = ()
    """For an update query: the superseded memories of the chain, newest first."""
    candidates: tuple[str, ...] = ()
    """For an ambiguous query: the current memories of every person of that name."""
    unique: str = ""
    """For a never-stored query: the words that occur in no memory."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Corpus:
    """Memories in save order (oldest first), the queries, and spare memories."""

    size: int
    seed: int
    memories: tuple[Memory, ...]
    queries: tuple[Query, ...]
    extra: tuple[Memory, ...] = ()
    """Memories that are not in the store, for timing single saves after the queries."""


def detail_token(unique: str) -> str:
    """The one distinctive token of a unique detail: ``OPS-48213`` -> ``48213``."""
    pieces: list[str] = re.findall(r"[A-Za-z0-9]+", unique)
    return pieces[-1].lower()


# ------------------------------------------------------------------ vocabulary


def _split(words: str, sep: str | None = None) -> tuple[str, ...]:
    return tuple(w.strip() for w in words.replace("\n", " " if sep is None else "").split(sep))


PROJECTS = _split("""
falcon heron osprey pipit wren ibis plover merlin harrier lapwing curlew egret avocet bittern
dunlin godwit gannet puffin tern linnet siskin thrush warbler oriole tanager magpie raven rook
jackdaw starling shrike vireo grebe loon stork condor pelican cormorant petrel albatross
kingfisher hoopoe bunting nuthatch kite buzzard goshawk peregrine skua fulmar shearwater
sandpiper snipe woodcock quail partridge pheasant grouse ptarmigan bustard flamingo spoonbill
toucan hornbill macaw lorikeet cockatoo kakapo kea weka tui bulbul drongo sunbird waxwing
redstart chiffchaff stonechat wheatear dipper ouzel coot moorhen crake aspen birch cedar alder
juniper sequoia willow larch maple cypress hemlock spruce linden hawthorn sycamore acacia
baobab tamarind mahogany basalt quartz garnet onyx cobalt galena pyrite feldspar obsidian
topaz zircon mica agate malachite cinnabar dolomite gypsum bauxite granite marble altair rigel
deneb sirius polaris antares lyra draco cygnus carina castor pollux canopus capella aldebaran
betelgeuse arcturus procyon spica regulus achernar mizar alcor tamarisk hickory sassafras
catalpa magnolia oleander wisteria saffron cardamom fennel tarragon
""")

HOSTS = (
    "staging",
    "prod-eu",
    "prod-us",
    "prod-apac",
    "ci-runner",
    "bastion",
    "db-primary",
    "db-replica",
    "build-box",
    "qa",
    "sandbox",
    "ingress",
    "worker-pool",
    "batch-node",
    "gpu-node",
    "demo",
    "preprod",
    "canary",
    "dev-box",
    "jumphost",
)

FIRST_NAMES = _split("""
Luis Ana Marta Tom Priya Kenji Sara Omar Lucia Diego Elena Pablo Nora Ivan Chloe Ravi Mei Jonas
Fatima Hugo Leila Mateo Irene Samir Hana Oscar Julia Felix Aisha Bruno Clara Emil Greta Hamza
Ines Jorge Kofi Lena Malik Nadia Olga Pedro Rosa Stefan Tariq Uma Victor Wei Yara Zoe Andres
Carmen Dario Eva Farid Gloria Hector Ikram Joao Karin
""")

SURNAMES = _split("""
García Marín Okafor Lindqvist Moreau Tanaka Silva Novak Fernández Rossi Müller Kowalski Nakamura
Haddad Petrov Andersen Dubois Costa Yilmaz Nguyen Patel Mensah Achebe Schmidt Jansen Virtanen
Horvat Popescu Santos Ortega Romero Navarro Castillo Herrera Vargas Delgado Iglesias Campos
Cortés Fuentes Gallego Prieto Lozano Pascual Vidal Molina Soler Roig Ferrer Serra Bosch Blanco
Rubio Aguilar Ramos Gil Ibáñez Lorenzo Hidalgo Carrasco Sanz Morales Peña Duarte Moreira
Teixeira Lopes Barros Ferreira Almeida Ribeiro Lehmann Becker Wagner Hoffmann Krüger Brandt
Vogel Keller Kaya Demir Aydin Şahin Ito Sato Suzuki Watanabe Yamamoto Chen Wang Liu Zhang Huang
Singh Sharma Iyer Reddy Banerjee Okoye Adeyemi Mwangi Otieno Kamau Diallo Traoré Mbeki Novotny
Dvořák Horák Kovács Nagy Szabó Varga Eriksson Nilsson Berg Dahl Holm Lund Strand Quinn Byrne
Walsh Murphy Doyle
""")

ROLES = (
    "SRE",
    "backend engineer",
    "frontend engineer",
    "data engineer",
    "product manager",
    "engineering manager",
    "security lead",
    "QA lead",
    "tech lead",
    "staff engineer",
    "product designer",
    "DBA",
    "platform engineer",
    "ML engineer",
    "data scientist",
    "support lead",
    "release manager",
    "solutions architect",
    "CTO",
    "head of infrastructure",
    "scrum master",
    "technical writer",
    "developer advocate",
    "network engineer",
    "analytics engineer",
    "recruiter",
    "finance partner",
    "legal counsel",
    "build engineer",
    "performance engineer",
    "UX researcher",
    "principal engineer",
    "contractor",
    "intern",
    "VP of engineering",
    "customer success manager",
)

TEAMS = (
    "platform",
    "payments",
    "growth",
    "identity",
    "data platform",
    "developer experience",
    "reliability",
    "security",
    "analytics",
    "core API",
    "internal tools",
    "infrastructure",
    "quality",
    "release engineering",
    "research",
    "partnerships",
    "compliance",
    "finance systems",
    "observability",
    "Atlas",
    "Nimbus",
    "Beacon",
    "Compass",
    "Harbor",
    "Lantern",
    "Meridian",
    "Summit",
    "Trident",
    "Zenith",
    "Anchor",
)

CITIES = _split(
    """
Madrid|Valencia|Sevilla|Bilbao|Barcelona|Lisbon|Porto|Lagos|Nairobi|Accra|Cairo|Berlin|Munich|
Hamburg|Vienna|Zurich|Paris|Lyon|Marseille|Brussels|Amsterdam|Rotterdam|Copenhagen|Stockholm|
Oslo|Helsinki|Tallinn|Riga|Vilnius|Warsaw|Krakow|Prague|Budapest|Bucharest|Athens|Istanbul|
Dublin|Edinburgh|Manchester|London|Toronto|Montreal|Vancouver|Boston|Austin|Denver|Seattle|
Chicago|Bogotá|Lima|Buenos Aires|Montevideo|São Paulo|Tokyo|Osaka|Seoul|Taipei|Singapore|
Bangalore|Pune|Hyderabad|Dubai|Tel Aviv|Sydney|Melbourne|Auckland|Cape Town|Kigali|Gdansk|Malaga""",
    "|",
)

CUSTOMERS = (
    "Northwind",
    "Globex",
    "Initech",
    "Umbrella Retail",
    "Stark Logistics",
    "Wayne Foods",
    "Acme Health",
    "Tyrell Energy",
    "Soylent Farms",
    "Cyberdyne Labs",
    "Hooli",
    "Vandelay Imports",
    "Oscorp Insurance",
    "Gringotts Bank",
    "Monarch Travel",
    "Blue Harbor Shipping",
)

# Tools by category; an area of a project chooses within a category.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "iac": ("Terraform", "Pulumi", "OpenTofu", "CloudFormation", "Ansible", "Crossplane"),
    "ci": ("GitHub Actions", "GitLab CI", "Jenkins", "Buildkite", "CircleCI", "Drone", "Tekton"),
    "db": ("PostgreSQL", "MySQL", "MongoDB", "SQLite", "DynamoDB", "CockroachDB", "ClickHouse"),
    "queue": ("Kafka", "RabbitMQ", "SQS", "NATS", "Redis Streams", "Pulsar", "Celery"),
    "web": ("FastAPI", "Django", "Flask", "Express", "NestJS", "Spring Boot", "Rails", "Gin"),
    "frontend": ("React", "Vue", "Angular", "SolidJS", "htmx", "Preact", "Lit"),
    "monitoring": ("Grafana", "Prometheus", "Datadog", "New Relic", "Honeycomb", "Zabbix"),
    "logging": ("Loki", "Elasticsearch", "OpenSearch", "Splunk", "Graylog", "Fluent Bit"),
    "tracing": ("Jaeger", "Tempo", "Zipkin", "OpenTelemetry", "Lightstep"),
    "orchestration": ("Kubernetes", "Nomad", "ECS", "Docker Swarm", "systemd units"),
    "auth": ("Keycloak", "Auth0", "Okta", "Cognito", "Ory Kratos", "Authelia"),
    "search": ("Elasticsearch", "OpenSearch", "Meilisearch", "Typesense", "Solr", "Vespa"),
    "storage": ("S3", "MinIO", "GCS", "Ceph", "Backblaze B2", "Wasabi"),
    "flags": ("LaunchDarkly", "Unleash", "Flagsmith", "GrowthBook", "ConfigCat"),
    "secrets": ("Vault", "SOPS", "AWS Secrets Manager", "Doppler", "Infisical"),
    "cache": ("Redis", "Memcached", "Valkey", "Varnish", "Hazelcast"),
    "workflow": ("Airflow", "Dagster", "Prefect", "Temporal", "Argo Workflows", "Luigi"),
    "testing": ("pytest", "Jest", "Playwright", "Cypress", "Vitest", "Selenium"),
    "packaging": ("uv", "Poetry", "pip-tools", "pnpm", "npm", "Yarn"),
    "lint": ("Ruff", "Flake8", "ESLint", "Biome", "Pylint", "Black"),
    "email": ("Postmark", "SendGrid", "Mailgun", "Amazon SES"),
    "payments": ("Stripe", "Adyen", "Braintree", "Mollie"),
}

AREAS: dict[str, tuple[str, ...]] = {
    "scheduler": ("iac", "queue", "workflow", "db"),
    "billing": ("db", "payments", "queue", "web"),
    "search": ("search", "cache", "db"),
    "auth": ("auth", "secrets", "cache"),
    "deploys": ("iac", "ci", "orchestration"),
    "metrics": ("monitoring", "db"),
    "logging": ("logging", "storage"),
    "tracing": ("tracing", "monitoring"),
    "backups": ("storage", "workflow"),
    "ingestion": ("queue", "workflow", "storage"),
    "reporting": ("db", "workflow", "frontend"),
    "admin panel": ("frontend", "web", "auth"),
    "API layer": ("web", "auth", "cache"),
    "signup flow": ("frontend", "email", "flags"),
    "test suite": ("testing", "ci"),
    "build pipeline": ("ci", "packaging", "lint"),
    "feature rollout": ("flags", "ci"),
    "config management": ("iac", "secrets"),
    "data warehouse": ("db", "workflow"),
    "image pipeline": ("queue", "storage", "orchestration"),
    "webhooks": ("queue", "web"),
    "checkout": ("payments", "frontend", "web"),
    "invoicing": ("payments", "db", "email"),
    "rate limiter": ("cache", "web"),
    "audit trail": ("db", "logging", "storage"),
    "CLI tooling": ("packaging", "testing", "lint"),
    "dashboard": ("frontend", "monitoring"),
    "ML training": ("workflow", "orchestration", "storage"),
    "recommendations": ("db", "cache", "search"),
    "data exports": ("storage", "workflow", "queue"),
    "cron jobs": ("workflow", "orchestration"),
    "customer portal": ("frontend", "web", "auth"),
    "status page": ("monitoring", "frontend"),
    "load testing": ("testing", "ci"),
    "secret rotation": ("secrets", "workflow"),
    "dev environment": ("orchestration", "packaging"),
}

REASONS = (
    "the team already writes TypeScript",
    "its state handling is simpler",
    "the licence of the alternative changed",
    "it was cheaper at our volume",
    "we need proper audit logs",
    "it works offline on laptops",
    "on-call found it easier to debug",
    "latency under load was lower in the spike",
    "it has first-class Python support",
    "it avoids vendor lock-in",
    "the managed offering saves us ops time",
    "it integrates with our SSO",
    "the community is larger",
    "it handled the failover drill better",
    "upgrades are painless",
    "it needs less memory on small nodes",
    "the docs are much better",
    "we already run it elsewhere",
    "it supports multi-region setups out of the box",
    "the other option lacked retries",
    "it keeps config in plain files",
    "hiring for it is easier",
    "it was the only one passing the security review",
    "its client libraries are mature",
    "it scales down to zero",
    "snapshots are built in",
    "it has a sane migration story",
    "the benchmark showed fewer timeouts",
    "it plays well with our monorepo",
    "support contracts are available in the EU",
    "its query language is familiar to everyone",
    "the team voted for it after the workshop",
    "cold starts were shorter",
    "it gives us typed APIs",
    "it needs no extra agents on the hosts",
    "it has better observability hooks",
    "its pricing is predictable",
    "we can self-host it",
    "it respects our data residency rules",
    "the previous attempt with the alternative failed",
)

# Environment attributes: canonical noun (every sentence about it contains it),
# values, and the predicates a memory uses.
_ENV_VALUES: dict[str, tuple[str, ...]] = {
    "database": (
        "PostgreSQL 12",
        "PostgreSQL 13",
        "PostgreSQL 14",
        "PostgreSQL 15",
        "PostgreSQL 16",
        "PostgreSQL 17",
        "MySQL 5.7",
        "MySQL 8.0",
        "MySQL 8.4",
        "MariaDB 10.6",
        "MariaDB 10.11",
        "MariaDB 11.4",
        "Oracle 19c",
    ),
    "os": (
        "Ubuntu 20.04",
        "Ubuntu 22.04",
        "Ubuntu 24.04",
        "Debian 11",
        "Debian 12",
        "Rocky Linux 8",
        "Rocky Linux 9",
        "AlmaLinux 9",
        "Alpine 3.19",
        "Alpine 3.20",
        "Amazon Linux 2023",
        "Fedora 40",
        "FreeBSD 14.1",
        "openSUSE Leap 15.5",
        "RHEL 9",
    ),
    "runtime": (
        "Python 3.10",
        "Python 3.11",
        "Python 3.12",
        "Python 3.13",
        "Node.js 18",
        "Node.js 20",
        "Node.js 22",
        "Java 17",
        "Java 21",
        "Go 1.21",
        "Go 1.22",
        "Go 1.23",
        "Ruby 3.2",
        "Ruby 3.3",
        "PHP 8.2",
        "PHP 8.3",
        ".NET 8",
        "Deno 1.44",
    ),
    "cache": (
        "Redis 6.2",
        "Redis 7.0",
        "Redis 7.2",
        "Valkey 7.2",
        "Valkey 8.0",
        "Memcached 1.6",
        "KeyDB 6.3",
        "Dragonfly 1.20",
    ),
    "broker": (
        "Kafka 3.5",
        "Kafka 3.6",
        "Kafka 3.7",
        "RabbitMQ 3.12",
        "RabbitMQ 3.13",
        "NATS 2.10",
        "Redpanda 24.1",
        "ActiveMQ 5.18",
        "Pulsar 3.2",
    ),
    "proxy": (
        "nginx 1.24",
        "nginx 1.26",
        "Caddy 2.7",
        "Caddy 2.8",
        "HAProxy 2.8",
        "HAProxy 3.0",
        "Traefik 2.11",
        "Traefik 3.1",
        "Envoy 1.30",
    ),
    "region": (
        "eu-west-1",
        "eu-west-3",
        "eu-central-1",
        "eu-north-1",
        "us-east-1",
        "us-east-2",
        "us-west-2",
        "ca-central-1",
        "sa-east-1",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-northeast-1",
        "ap-south-1",
    ),
    "disk": (
        "50 GB",
        "80 GB",
        "100 GB",
        "120 GB",
        "200 GB",
        "250 GB",
        "300 GB",
        "400 GB",
        "500 GB",
        "750 GB",
        "1 TB",
        "2 TB",
        "4 TB",
    ),
    "ssh": ("deploy", "ops", "ubuntu", "admin", "ec2-user", "svc-ci", "release", "automation"),
    "kernel": ("5.10", "5.15", "6.1", "6.5", "6.6", "6.8", "6.10"),
}

_ENV_NOUN: dict[str, str] = {
    "database": "database",
    "os": "operating system",
    "port": "API port",
    "address": "IP address",
    "runtime": "runtime",
    "cache": "cache",
    "broker": "message broker",
    "proxy": "reverse proxy",
    "region": "cloud region",
    "disk": "data disk",
    "ssh": "SSH user",
    "kernel": "kernel",
}

_ENV_PREDS: dict[str, tuple[str, ...]] = {
    "database": (
        "runs {v} as its database",
        "uses {v} for the database",
        "keeps its database on {v}",
        "has the database on {v}",
        "serves the database from {v}",
    ),
    "os": (
        "runs {v} as operating system",
        "has {v} as its operating system",
        "is installed with the {v} operating system",
        "uses {v} for the operating system",
    ),
    "port": (
        "serves the API on port {v}",
        "exposes API port {v}",
        "listens for API traffic on port {v}",
    ),
    "address": (
        "has the private IP address {v}",
        "is reachable at IP address {v}",
        "answers on IP address {v}",
    ),
    "runtime": (
        "runs the app on the {v} runtime",
        "uses {v} as runtime",
        "has the {v} runtime installed",
    ),
    "cache": (
        "uses {v} as its cache",
        "keeps a {v} cache in front of the app",
        "caches through {v} (cache tier)",
    ),
    "broker": (
        "uses {v} as message broker",
        "sends background work through the {v} message broker",
        "talks to a {v} message broker",
    ),
    "proxy": (
        "sits behind {v} as reverse proxy",
        "uses {v} for the reverse proxy",
        "fronts its traffic with a {v} reverse proxy",
    ),
    "region": (
        "is deployed in the {v} cloud region",
        "lives in cloud region {v}",
        "runs out of the {v} cloud region",
    ),
    "disk": (
        "has a {v} data disk",
        "mounts a data disk of {v}",
        "was given a {v} data disk",
    ),
    "ssh": (
        "accepts SSH as the user {v}",
        "is reached over SSH with user {v}",
        "has {v} as its SSH user",
    ),
    "kernel": (
        "boots Linux kernel {v}",
        "is on kernel {v}",
        "runs the {v} kernel",
    ),
}

_ENV_SUBJECTS = (
    "the {host} host of {project}",
    "{project}'s {host} server",
    "the {project} {host} box",
    "{project} {host}",
    "our {host} node for {project}",
    "the {host} machine in {project}",
    "{project}'s {host} environment",
)

_ENV_PREFIXES = (
    "",
    "",
    "Env note: ",
    "Infra: ",
    "FYI, ",
    "Checked today: ",
    "For the record, ",
    "Ops log: ",
    "Heads-up: ",
    "Setup detail: ",
)

_ENV_CORRECTIONS = (
    "{prefix}{subj} moved from {old} to {new} as its {noun}{detail}.",
    "{Subj} no longer uses {old}; its {noun} is now {new}{detail}.",
    "Upgrade done: {subj} went from {old} to {new} ({noun}){detail}.",
    "Correction: {subj} switched the {noun} from {old} to {new}{detail}.",
    "{Subj} was migrated off {old}, and the {noun} is {new} from today{detail}.",
    "Changed: the {noun} of {subj} is {new} (previously {old}){detail}.",
)

_PORT_CORRECTIONS = (
    "{Subj} changed its API port: it now listens on port {new}.",
    "New API port for {subj}: {new}, effective immediately.",
    "{prefix}{subj} was moved to API port {new} after the firewall review.",
)

PREF_TOPICS: dict[str, tuple[str, ...]] = {
    "Python indentation": ("4 spaces", "2 spaces", "tabs"),
    "commit messages": (
        "Conventional Commits",
        "short imperative subjects",
        "a ticket id first",
        "gitmoji prefixes",
    ),
    "code editor": ("Neovim", "VS Code", "Helix", "Emacs", "IntelliJ IDEA", "Zed"),
    "shell": ("zsh", "fish", "bash", "nushell"),
    "docstrings": ("Google style", "NumPy style", "reST style", "one-line summaries only"),
    "test runner": ("pytest", "Vitest", "Jest", "cargo test"),
    "merge strategy": ("squash merges", "rebase and merge", "merge commits"),
    "line length": ("100 characters", "120 characters", "88 characters", "80 characters"),
    "quote style in Python": ("double quotes", "single quotes"),
    "type checking": ("mypy in strict mode", "pyright", "no type checker on scripts"),
    "dependency pinning": ("exact pins with a lock file", "compatible ranges", "pins only in apps"),
    "branch names": ("feature/<ticket>-<slug>", "user/topic", "kebab-case summaries"),
    "code review size": ("small PRs under 300 lines", "one concern per PR", "stacked PRs"),
    "log timestamps": ("ISO 8601 in UTC", "epoch milliseconds", "local time with offset"),
    "time zones in reports": ("UTC", "Europe/Madrid", "the reader's local zone"),
    "terminal theme": ("Solarized Light", "Gruvbox", "Nord", "Catppuccin", "Dracula"),
    "error messages": (
        "one clear line, no traceback",
        "a hint on how to fix it",
        "the failing value quoted",
    ),
    "code comments": ("English", "Spanish", "English with a Spanish glossary"),
    "SQL keyword case": ("upper case", "lower case"),
    "JSON indentation": ("2 spaces", "4 spaces", "a compact single line"),
    "changelog format": ("Keep a Changelog", "towncrier fragments", "release notes in the PR"),
    "JavaScript package manager": ("pnpm", "npm", "Yarn", "Bun"),
    "Python version for new scripts": ("Python 3.12", "Python 3.11", "Python 3.13"),
    "container base images": ("distroless", "Debian slim", "Alpine", "Chainguard"),
    "documentation format": ("Markdown", "AsciiDoc", "reStructuredText"),
    "diagram tool": ("Mermaid", "PlantUML", "Excalidraw", "draw.io"),
    "API style": ("REST with OpenAPI", "GraphQL", "gRPC", "JSON-RPC"),
    "date format": ("YYYY-MM-DD", "DD/MM/YYYY", "ISO week numbers"),
    "git hooks": ("the pre-commit framework", "lefthook", "hooks only in CI"),
    "status updates": ("short bullet summaries", "a daily written note", "async videos"),
    "meeting times": ("mornings only", "after lunch", "Tuesdays and Thursdays"),
    "naming in Python": ("snake_case everywhere", "descriptive long names"),
    "variable naming in JavaScript": ("camelCase", "descriptive names over short ones"),
    "test style": ("table-driven tests", "given-when-then names", "property-based tests"),
    "error handling": ("explicit Result types", "exceptions with context", "failing fast"),
    "logging library": ("structlog", "loguru", "the standard logging module"),
    "HTTP client": ("httpx", "requests", "aiohttp"),
    "CLI framework": ("Typer", "Click", "argparse"),
    "ORM": ("SQLAlchemy", "Django ORM", "raw SQL"),
    "secrets in local dev": ("a .env file", "the 1Password CLI", "direnv"),
    "assistant answers": ("short and direct", "code first", "answers in Spanish"),
    "explanations": ("step by step", "diffs instead of whole files", "a summary at the end"),
    "PR descriptions": ("a checklist", "why before what", "screenshots for UI changes"),
    "async Python": ("asyncio", "trio", "anyio"),
}

_PREF_FRAMES = (
    "I prefer {value} for {topic}{detail}.",
    "Always use {value} when it comes to {topic}{detail}.",
    "My {topic} preference: {value}{detail}.",
    "Please stick to {value} for {topic}{detail}.",
    "For {topic}, go with {value}, never {alt}{detail}.",
    "Note to self: {value} is how I like {topic}{detail}.",
    "When you touch {topic}, use {value}{detail}.",
    "I like {topic} with {value}; {alt} annoys me{detail}.",
)

_PREF_PROJECT_FRAMES = (
    "In {project}, I prefer {value} for {topic}{detail}.",
    "For the {project} repo, use {value} for {topic}{detail}.",
    "{Project} exception: {topic} uses {value}, not {alt}{detail}.",
    "Inside {project} the rule for {topic} is {value}{detail}.",
)

_PREF_CORRECTIONS = (
    "I've changed my mind on {topic_full}: {new} now, not {old}{detail}.",
    "Switching my {topic_full} preference from {old} to {new}{detail}.",
    "From now on use {new} for {topic_full} instead of {old}{detail}.",
    "Update: for {topic_full} I now prefer {new} (I used to want {old}){detail}.",
)

_DECISION_FRAMES = (
    "We chose {chosen} over {rejected} for the {project} {area} because {reason}{detail}.",
    "Decision for {project}: the {area} goes with {chosen}, not {rejected}, since {reason}"
    "{detail}.",
    "After a spike, the {project} team picked {chosen} instead of {rejected} for {area}, as "
    "{reason}{detail}.",
    "{Project} {area}: {chosen} wins over {rejected}. Why: {reason}{detail}.",
    "We are standardising the {project} {area} on {chosen} rather than {rejected}; {reason}"
    "{detail}.",
    "Adopted {chosen} for the {area} of {project}; {rejected} was considered and dropped "
    "because {reason}{detail}.",
    "The {area} in {project} will use {chosen}. We looked at {rejected} too, but {reason}{detail}.",
    "Agreed with the team: {project} {area} on {chosen} (not {rejected}) because {reason}{detail}.",
    "Architecture call for {project}: {chosen} beats {rejected} for the {area}, mainly because "
    "{reason}{detail}.",
    "{Project} goes {chosen} for {area}; {rejected} lost out because {reason}{detail}.",
)

_DECISION_CORRECTIONS = (
    "Change of plan for {project} {area}: we dropped {old} and moved to {new}, since {reason}"
    "{detail}.",
    "{Project} {area} is switching from {old} to {new}; {reason}{detail}.",
    "Update to the {project} {area} decision: {new} replaces {old} because {reason}{detail}.",
    "We reversed course on the {area} in {project}: {old} is out, {new} is in, because {reason}"
    "{detail}.",
    "Migrating the {project} {area} off {old} onto {new} after all; {reason}{detail}.",
)

_PERSON_FRAMES = (
    "{first} {last} is the {role} on the {team} team, based in {city}{detail}.",
    "Met {first} {last} today: {role}, {team} team, works from {city}{detail}.",
    "Contact: {first} {last}, {role} for the {team} team in {city}{detail}.",
    "{first} {last} joined the {team} team as {role}; lives in {city}{detail}.",
    "People note: {first} {last} ({role}, {team} team) sits in the {city} office{detail}.",
    "{first} {last} from {city} is our {role} on {team}{detail}.",
    "If you need the {team} team, ask {first} {last}, the {role} in {city}{detail}.",
)

_PERSON_CITY_CORRECTIONS = (
    "{first} {last} moved from {old} to {new}{detail}.",
    "{first} {last} relocated to {new}; no longer in {old}{detail}.",
    "Update: {first} {last} now works from {new} instead of {old}{detail}.",
)

_PERSON_ROLE_CORRECTIONS = (
    "{first} {last} is now the {new} (previously {old}){detail}.",
    "{first} {last} changed roles: {old} to {new}{detail}.",
    "Role change: {first} {last} went from {old} to {new}{detail}.",
)

# Project facts: noun, values, predicates, and whether it can be scoped to an area.
_PROJECT_ATTRS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], bool]] = {
    "cadence": (
        "release cadence",
        (
            "every week",
            "every two weeks",
            "monthly",
            "every Tuesday",
            "on demand",
            "twice a month",
            "quarterly",
        ),
        ("has its release cadence set to {v}", "keeps a release cadence of {v}"),
        False,
    ),
    "language": (
        "main language",
        ("Python", "Go", "TypeScript", "Kotlin", "Rust", "Java", "C#", "Scala", "Ruby", "C++"),
        ("is written mainly in {v} (main language)", "has {v} as its main language"),
        True,
    ),
    "owner": (
        "owning team",
        TEAMS,
        ("has the {v} team as its owning team", "lists the {v} team as owning team"),
        True,
    ),
    "repo": (
        "repository",
        ("GitHub", "GitLab", "Bitbucket", "Gitea", "Codeberg", "Azure DevOps"),
        ("keeps its repository on {v}", "has its repository hosted on {v}"),
        True,
    ),
    "license": (
        "license",
        ("MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0", "MPL-2.0", "proprietary EULA"),
        ("is released under the {v} license", "ships with a {v} license"),
        False,
    ),
    "sla": (
        "uptime SLA",
        ("99.5 %", "99.9 %", "99.95 %", "99.99 %"),
        ("promises an uptime SLA of {v}", "commits to a {v} uptime SLA"),
        True,
    ),
    "coverage": (
        "coverage target",
        ("70 %", "75 %", "80 %", "85 %", "90 %", "95 %"),
        ("enforces a coverage target of {v}", "keeps the test coverage target at {v}"),
        True,
    ),
    "branch": (
        "default branch",
        ("main", "trunk", "develop", "master", "stable"),
        ("uses {v} as default branch", "has {v} as its default branch"),
        False,
    ),
    "window": (
        "deploy window",
        ("weekday mornings", "Tuesdays and Thursdays", "any time", "after 18:00 UTC", "Mondays"),
        ("deploys only in its deploy window, {v}", "has a deploy window of {v}"),
        True,
    ),
    "freeze": (
        "code freeze",
        (
            "in the last week of each quarter",
            "two days before each release",
            "every December",
            "the week before audits",
        ),
        ("enters code freeze {v}", "has its code freeze {v}"),
        False,
    ),
    "tracker": (
        "issue tracker",
        ("Linear", "GitHub Issues", "YouTrack", "Redmine", "GitLab Issues", "Shortcut"),
        ("tracks work in {v} (issue tracker)", "uses {v} as issue tracker"),
        False,
    ),
    "customer": (
        "main customer",
        CUSTOMERS,
        ("is built for {v}, the main customer", "has {v} as its main customer"),
        True,
    ),
    "docs": (
        "docs site",
        ("MkDocs", "Docusaurus", "Sphinx", "Hugo", "VitePress"),
        ("publishes its docs site with {v}", "builds the docs site using {v}"),
        False,
    ),
    "oncall": (
        "on-call rotation",
        ("weekly", "fortnightly", "follow-the-sun"),
        ("runs a {v} on-call rotation", "has an on-call rotation that is {v}"),
        True,
    ),
}

_PROJECT_SUBJECTS = ("{project}", "the {project} project")
_PROJECT_AREA_SUBJECTS = ("the {project} {area} service", "{project}'s {area} component")
_PROJECT_AREA_QUERY_SUBJECTS = (
    "{project}'s {area}",
    "the {area} part of {project}",
    "{project} {area}",
)
_PROJECT_PREFIXES = ("", "", "Project fact: ", "Worth remembering: ", "Note: ", "Kickoff notes: ")
_PROJECT_CORRECTIONS = (
    "{Subj} changed its {noun} from {old} to {new}{detail}.",
    "As of this month, the {noun} of {subj} is {new}, no longer {old}{detail}.",
    "Heads-up: {subj} moved its {noun} from {old} to {new}{detail}.",
)

_DISTRACTOR_FRAMES = (
    "Incident {d}: {project} {host} was slow during the {area} backfill; restarting workers "
    "fixed it.",
    "Standup: talked about the {project} {area} with the {team} team, nothing decided yet ({d}).",
    "TODO for {project}: rotate credentials on {host} and review the {tool} dashboards ({d}).",
    "Benchmarked {tool} for the {project} {area} on {host}: {small} ms median, notes in {d}.",
    "The {project} {area} demo went fine; follow-ups tracked in {d}.",
    "Flaky test in the {project} {area} again, probably timing-related ({d}).",
    "Read a comparison of {tool} and {tool2}; might matter for {project} one day ({d}).",
    "Pairing session on {project} {area}: sketched a refactor of the retry logic ({d}).",
    "Outage review {d}: {host} lost connectivity for {small} minutes and {project} {area} "
    "degraded.",
    "Asked about {tool} licensing for {project}; waiting on legal ({d}).",
    "Cleaned up stale branches in the {project} repo after the {area} work ({d}).",
    "Spike idea for {project}: try {tool} in the {area}, no commitment ({d}).",
    "{Project} {area} sprint review moved to Thursday; agenda in {d}.",
    "Logs from {project} {host} show warnings from {tool} after the last deploy ({d}).",
    "Gave new joiners a walkthrough of the {project} {area} code ({d}).",
    "Capacity planning for {project} {host}: expect {small} % growth next quarter ({d}).",
    "Reminder: the {team} team owes us feedback on the {project} {area} proposal ({d}).",
    "Ran the {project} {area} migration dry-run on {host}; no errors ({d}).",
)

# Never stored: no memory contains any of these words (the tests check it).
_NEVER_TOPICS = (
    "push notifications",
    "high contrast palette",
    "GDPR consent banner",
    "espresso grinder",
    "parking permit",
    "visa renewal",
    "holiday party",
    "Bluetooth headsets",
    "keyboard layouts",
    "wifi router",
    "tax receipts",
    "OKR scoring",
    "referral bonuses",
    "podcast sponsorship",
    "sabbatical policy",
    "relocation allowance",
    "gym membership",
    "typeface",
    "emoji in Slack",
    "voice commands",
    "smartwatch companion",
    "carbon footprint",
    "Halloween costume",
    "satellite imagery",
)
_NEVER_TOOLS = (
    "Cassandra",
    "Heroku",
    "Svelte",
    "Haskell",
    "Neptune",
    "Couchbase",
    "Zookeeper",
    "Consul",
    "Netlify",
    "Vercel",
    "Firebase",
    "Akamai",
    "Scylla",
    "Clojure",
    "Erlang",
    "OCaml",
    "Xamarin",
    "Flutter",
    "Snowflake",
    "Bigtable",
    "Redshift",
    "Databricks",
    "Tableau",
    "Metabase",
)
_NEVER_FIRST = (
    "Beatriz",
    "Yusuf",
    "Ingrid",
    "Dmitri",
    "Aiko",
    "Florin",
    "Svetlana",
    "Thiago",
    "Ngozi",
    "Bjorn",
    "Esperanza",
    "Radek",
    "Anouk",
    "Kwame",
    "Soraya",
)

# ------------------------------------------------------------------ query frames

_ENV_SUBJECT_QUERIES = (
    "What {noun} does {project} use on {host}?",
    "Which {noun} is set up on the {host} environment for {project}?",
    "{project} / {host}: what's the {noun} there?",
    "Remind me of the {noun} configured for {project}'s {host}.",
    "Do you know the {noun} on {project} {host}?",
    "What {noun} did we end up with on the {host} side of {project}?",
)
_ENV_UPDATE_QUERIES = (
    "Which {noun} does {project} {host} use now?",
    "What's the current {noun} on the {host} box of {project}?",
    "Is {project}'s {host} still on {old}?",
    "These days, what {noun} does {project} have on {host}?",
)
_DECISION_SUBJECT_QUERIES = (
    ("Why did {project} go with {chosen} for the {area}?", ("project", "area", "chosen")),
    (
        "What was the reasoning behind picking {chosen} instead of {rejected} in {project}'s "
        "{area}?",
        ("project", "area", "chosen", "rejected"),
    ),
    ("{project} {area}: why {chosen} and not {rejected}?", ("project", "area", "chosen")),
    ("How come the {area} of {project} runs on {chosen}?", ("project", "area", "chosen")),
    (
        "What made us prefer {chosen} to {rejected} for {project}?",
        ("project", "chosen", "rejected"),
    ),
    (
        "Explain the {chosen} vs {rejected} call for the {project} {area}.",
        ("project", "area", "chosen", "rejected"),
    ),
)
_DECISION_UPDATE_QUERIES = (
    "Are we still using {old} for the {project} {area}?",
    "Is {old} still the pick for {project}'s {area}?",
    "Did {project} keep {old} in the {area}, or what replaced it?",
    "What is the {area} of {project} on at the moment, {old} or something else?",
)
_PREF_SUBJECT_QUERIES = (
    "What's my preference for {topic_full}?",
    "How do I like {topic_full} done?",
    "Which option do I want for {topic_full}?",
    "Remind me what I picked for {topic_full}.",
    "Do I have a favourite when it comes to {topic_full}?",
)
_PREF_UPDATE_QUERIES = (
    "What do I want for {topic_full} these days?",
    "Is {old} still my choice for {topic_full}?",
    "Which option do I go with for {topic_full} now?",
)
_PERSON_SUBJECT_QUERIES = (
    "Who is {first} {last}?",
    "What does {first} {last} do here?",
    "Tell me about {first} {last}.",
    "Which team does {first} {last} belong to?",
    "What's {first} {last}'s job?",
)
_PERSON_UPDATE_QUERIES = {
    "city": (
        "Where is {first} {last} based now?",
        "Is {first} {last} still in {old}?",
        "Which city does {first} {last} work from these days?",
    ),
    "role": (
        "What's {first} {last}'s role now?",
        "Is {first} {last} still the {old}?",
        "What does {first} {last} do these days?",
    ),
}
_AMBIGUOUS_QUERIES = (
    "{first}",
    "Who is {first}?",
    "What do we know about {first}?",
    "Tell me about {first}.",
    "Remind me who {first} is.",
    "{first}?",
    "Info on {first}, please.",
    "What's {first}'s role?",
    "Where is {first} based?",
    "How do I reach {first}?",
    "Which team is {first} on?",
)
_PROJECT_SUBJECT_QUERIES = (
    "What's the {noun} of {subj_q}?",
    "Which {noun} does {subj_q} have?",
    "Tell me the {noun} for {subj_q}.",
    "How is the {noun} set for {subj_q}?",
)
_PROJECT_UPDATE_QUERIES = (
    "What's the {noun} of {subj_q} now?",
    "Is the {noun} of {subj_q} still {old}?",
    "Did {subj_q} change its {noun}? What is it today?",
)
_DETAIL_QUERIES_COMMON = (
    "What do we know about {ref}?",
    "What is {ref} about?",
    "Anything stored under {ref}?",
    "Pull up the note with {ref}.",
    "Find {ref} for me.",
    "{ref}: what was that again?",
    "What did I record about {ref}?",
)
_DETAIL_QUERIES: dict[str, tuple[str, ...]] = {
    "env": (
        "Which host of {project} is {ref} about?",
        "Look up {ref}: which machine and which setting?",
        "What does {ref} say about {project}?",
    ),
    "decision": (
        "What did we decide in {ref}?",
        "What's the rationale recorded in {ref}?",
        "Summarise the call made in {ref}.",
    ),
    "pref": ("What preference did I state in {ref}?", "Which habit of mine is {ref} about?"),
    "person": ("Who has {ref}?", "Whose is {ref}?", "Which colleague goes with {ref}?"),
    "project": ("Which project fact goes with {ref}?", "What did {ref} settle for {project}?"),
    "distractor": ("What happened in {ref}?", "What was {ref} for {project}?"),
}
_NEVER_QUERIES: tuple[tuple[str, str], ...] = (
    ("What did we decide about {topic} for {project}?", "topic"),
    ("Which version of {rtool} runs on the {host} host of {project}?", "rtool"),
    ("Who is {rfirst}?", "rfirst"),
    ("What's {rfirst} {surname}'s role?", "rfirst"),
    ("What was ticket {prefix}-{number} about?", "number"),
    ("Do I have a preference about {topic}?", "topic"),
    ("Why did we drop {rtool} from the {area}?", "rtool"),
    ("Where does the {codename} service run?", "codename"),
    ("Which port does {rtool} listen on in {project}?", "rtool"),
    ("Remind me what we agreed on {topic}.", "topic"),
    ("Is {project} using {rtool} anywhere?", "rtool"),
    ("What's the status of the {codename} milestone?", "codename"),
    ("How did the {topic} discussion with the {team} team end?", "topic"),
    ("What budget did we approve for {topic}?", "topic"),
    ("Who owns {topic} in {project}?", "topic"),
    ("Tell me about {rfirst} from {city}.", "rfirst"),
)

# ------------------------------------------------------------------ helpers

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aiou"
_TICKET_PREFIXES = ("OPS", "INFRA", "PLAT", "SEC", "DATA", "WEB", "CHG", "REQ", "BUG", "TASK")
_WORD = re.compile(r"[a-z0-9]+")


def _fold(text: str) -> str:
    if text.isascii():
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _tokens(text: str) -> list[str]:
    """A crude, stable tokenizer for the generator's own checks (not the search's)."""
    out = []
    for w in _WORD.findall(_fold(text)):
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return out


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _collect_vocabulary() -> frozenset[str]:
    pieces: list[str] = [*PROJECTS, *HOSTS, *FIRST_NAMES, *SURNAMES, *ROLES, *TEAMS, *CITIES]
    pieces += [*CUSTOMERS, *REASONS, *AREAS, *PREF_TOPICS, *_DISTRACTOR_FRAMES]
    for tools in CATEGORIES.values():
        pieces += tools
    for values in (*_ENV_VALUES.values(), *PREF_TOPICS.values(), *_ENV_PREDS.values()):
        pieces += values
    for noun, values, preds, _ in _PROJECT_ATTRS.values():
        pieces += [noun, *values, *preds]
    pieces += [*_DECISION_FRAMES, *_PREF_FRAMES, *_PERSON_FRAMES, *_ENV_SUBJECTS]
    return frozenset(t for p in pieces for t in _WORD.findall(_fold(p)))


_VOCABULARY = _collect_vocabulary()
_FIXED_NUMBERS = frozenset(int(t) for t in _VOCABULARY if t.isdigit())
"""Numbers the templates write themselves ("ISO 8601"); never drawn as a unique detail."""


class _Pool:
    """Unique details: numbers and codenames drawn once per corpus."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.numbers: set[int] = set()
        self.words: set[str] = set()

    def number(self, lo: int = 1000, hi: int = 99_999) -> int:
        while True:
            n = self.rng.randint(lo, hi)
            if n not in self.numbers and n not in _FIXED_NUMBERS and not 1900 <= n <= 2099:
                self.numbers.add(n)
                return n

    def codename(self) -> str:
        rng = self.rng
        while True:
            word = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(3))
            if word not in self.words and word not in _VOCABULARY:
                self.words.add(word)
                return word.capitalize()

    def ticket(self, prefixes: Sequence[str]) -> str:
        return f"{self.rng.choice(prefixes)}-{self.number()}"


@dataclass(slots=True)
class _Draft:
    """A memory before it has a date-ordered id."""

    family: str
    kind: str
    text: str
    day: int
    project: str | None
    subject: str
    unique: str
    ref: str
    """How a query names the unique detail."""
    slots: dict[str, str] = field(default_factory=dict)
    prev: _Draft | None = None
    superseded: bool = False
    seq: int = 0
    index: int = -1
    id_hint: str = ""


_BASE_DAY = date(2023, 1, 2).toordinal()
_LATEST_DAY = date(2026, 11, 30).toordinal()
"""No memory is dated later: a fixed day in the past, so a seed gives the same corpus on
any day it runs."""
EXTRA_MEMORIES = 40
"""Memories dated after the corpus, saved one by one by the benchmarks' timed saves."""


@dataclass(slots=True)
class _Context:
    rng: random.Random
    pool: _Pool
    projects: list[str]
    keys: set[str] = field(default_factory=set)
    persons: set[tuple[str, str]] = field(default_factory=set)
    seq: int = 0

    def day(self, lo: int = 0, hi: int = 900) -> int:
        return _BASE_DAY + self.rng.randint(lo, hi)

    def claim(self, key: str) -> bool:
        if key in self.keys:
            return False
        self.keys.add(key)
        return True


def _pick_other(rng: random.Random, values: Sequence[str], old: str) -> str:
    choices = [v for v in values if v != old]
    return rng.choice(choices)


# ------------------------------------------------------------------ details


def _env_detail(ctx: _Context, project: str) -> tuple[str, str, str]:
    """(clause for the text, unique, ref for a query)."""
    rng = ctx.rng
    if rng.random() < 0.3:
        code = ctx.pool.codename()
        clause = rng.choice(
            (" (the box is named {d})", "; hostname {d}", ", machine name {d}")
        ).format(d=code)
        return clause, code, rng.choice((code, f"the {code} box", f"hostname {code}"))
    prefixes = (*_TICKET_PREFIXES[:7], project[:3].upper())
    ticket = ctx.pool.ticket(prefixes)
    clause = rng.choice(
        (" (ticket {d})", "; change {d}", ", see {d}", ", per {d}", "; tracked in {d}")
    ).format(d=ticket)
    return clause, ticket, rng.choice((ticket, f"ticket {ticket}"))


def _decision_detail(ctx: _Context) -> tuple[str, str, str]:
    rng = ctx.rng
    roll = rng.random()
    if roll < 0.55:
        ticket = ctx.pool.ticket(("ADR", "RFC", "DEC", "ARCH"))
        clause = rng.choice((" ({d})", "; recorded in {d}", ", see {d}", " (ref {d})")).format(
            d=ticket
        )
        return clause, ticket, rng.choice((ticket, f"decision {ticket}"))
    if roll < 0.8:
        n = str(ctx.pool.number())
        clause = rng.choice((" (PR #{d})", "; merged in PR #{d}", ", discussed in PR #{d}"))
        return clause.format(d=n), n, f"PR {n}"
    code = ctx.pool.codename()
    clause = rng.choice((" (from the {d} workshop)", "; agreed at the {d} offsite"))
    return clause.format(d=code), code, rng.choice((code, f"the {code} workshop"))


def _pref_detail(ctx: _Context) -> tuple[str, str, str]:
    rng = ctx.rng
    roll = rng.random()
    if roll < 0.6:
        n = str(ctx.pool.number())
        clause, ref = rng.choice(
            (
                (" (said in PR #{d})", "PR {d}"),
                (", see review {d}", "review {d}"),
                (" (agreed in PR #{d})", "PR {d}"),
                (" (comment {d})", "comment {d}"),
            )
        )
        return clause.format(d=n), n, ref.format(d=n)
    code = ctx.pool.codename()
    clause = rng.choice((" (from the {d} retro)", "; came up in the {d} retro"))
    return clause.format(d=code), code, rng.choice((code, f"the {code} retro"))


def _person_detail(ctx: _Context) -> tuple[str, str, str]:
    rng = ctx.rng
    n = str(ctx.pool.number())
    label = rng.choice(("badge", "employee number", "extension", "desk"))
    clause = rng.choice((" ({label} {d})", "; {label} {d}", ", {label} {d}"))
    return clause.format(label=label, d=n), n, f"{label} {n}"


def _project_detail(ctx: _Context, project: str) -> tuple[str, str, str]:
    rng = ctx.rng
    roll = rng.random()
    if roll < 0.4:
        code = ctx.pool.codename()
        clause = rng.choice((" (milestone {d})", "; milestone {d}", ", set at milestone {d}"))
        return clause.format(d=code), code, rng.choice((code, f"milestone {code}"))
    if roll < 0.7:
        n = str(ctx.pool.number())
        return f"; wiki page {n}", n, f"wiki page {n}"
    ticket = ctx.pool.ticket((project[:3].upper(), "PRJ", "REQ"))
    clause = rng.choice((" ({d})", ", ticket {d}")).format(d=ticket)
    return clause, ticket, ticket


def _distractor_detail(ctx: _Context) -> tuple[str, str]:
    rng = ctx.rng
    if rng.random() < 0.7:
        ticket = ctx.pool.ticket(("INC", "TASK", "MEET", "OPS", "NOTE"))
        return ticket, ticket
    code = ctx.pool.codename()
    return f"thread {code}", code


# ------------------------------------------------------------------ memory makers


def _make_env(ctx: _Context) -> _Draft | None:
    rng = ctx.rng
    for _ in range(20):
        project = rng.choice(ctx.projects)
        host = rng.choice(HOSTS)
        attr = rng.choice(tuple(_ENV_NOUN))
        if ctx.claim(f"env:{project}:{host}:{attr}"):
            break
    else:
        return None
    noun = _ENV_NOUN[attr]
    if attr == "port":
        value = str(ctx.pool.number(10_000, 65_535))
        clause, unique, ref = "", value, f"port {value}"
    else:
        value = _env_value(rng, attr)
        clause, unique, ref = _env_detail(ctx, project)
    subj = rng.choice(_ENV_SUBJECTS).format(host=host, project=project)
    prefix = rng.choice(_ENV_PREFIXES)
    pred = rng.choice(_ENV_PREDS[attr]).format(v=value)
    text = f"{prefix}{subj} {pred}{clause}."
    text = _cap(text)
    slots = {"project": project, "host": host, "noun": noun, "attr": attr, "value": value}
    return _Draft(
        family="env",
        kind=ENVIRONMENT,
        text=text,
        day=ctx.day(),
        project=project,
        subject=f"env:{project}:{host}:{attr}",
        unique=unique,
        ref=ref,
        slots=slots,
    )


def _env_value(rng: random.Random, attr: str) -> str:
    if attr == "address":
        return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"
    return rng.choice(_ENV_VALUES[attr])


def _correct_env(ctx: _Context, prev: _Draft) -> _Draft:
    rng = ctx.rng
    s = prev.slots
    attr, old = s["attr"], s["value"]
    subj = rng.choice(_ENV_SUBJECTS).format(host=s["host"], project=s["project"])
    prefix = rng.choice(_ENV_PREFIXES)
    if attr == "port":
        new = str(ctx.pool.number(10_000, 65_535))
        frame = rng.choice(_PORT_CORRECTIONS)
        clause, unique, ref = "", new, f"port {new}"
    else:
        new = _env_value(rng, attr)
        while new == old:
            new = _env_value(rng, attr)
        frame = rng.choice(_ENV_CORRECTIONS)
        clause, unique, ref = _env_detail(ctx, s["project"])
    text = frame.format(
        prefix=prefix, subj=subj, Subj=_cap(subj), old=old, new=new, noun=s["noun"], detail=clause
    )
    return _Draft(
        family="env",
        kind=CORRECTION,
        text=_cap(text),
        day=prev.day + rng.randint(14, 240),
        project=prev.project,
        subject=prev.subject,
        unique=unique,
        ref=ref,
        slots={**s, "value": new, "old": old},
        prev=prev,
    )


def _make_decision(ctx: _Context) -> _Draft | None:
    rng = ctx.rng
    areas = tuple(AREAS)
    for _ in range(20):
        project = rng.choice(ctx.projects)
        area = rng.choice(areas)
        category = rng.choice(AREAS[area])
        if ctx.claim(f"decision:{project}:{area}:{category}"):
            break
    else:
        return None
    chosen, rejected = rng.sample(CATEGORIES[category], 2)
    clause, unique, ref = _decision_detail(ctx)
    frame = rng.choice(_DECISION_FRAMES)
    slots = {
        "project": project,
        "Project": _cap(project),
        "area": area,
        "category": category,
        "chosen": chosen,
        "rejected": rejected,
        "reason": rng.choice(REASONS),
    }
    return _Draft(
        family="decision",
        kind=DECISION,
        text=frame.format(**slots, detail=clause),
        day=ctx.day(),
        project=project,
        subject=f"decision:{project}:{area}:{category}",
        unique=unique,
        ref=ref,
        slots=slots,
    )


def _correct_decision(ctx: _Context, prev: _Draft) -> _Draft:
    rng = ctx.rng
    s = prev.slots
    old = s["chosen"]
    new = s["rejected"] if rng.random() < 0.5 else _pick_other(rng, CATEGORIES[s["category"]], old)
    if new == old:
        new = _pick_other(rng, CATEGORIES[s["category"]], old)
    clause, unique, ref = _decision_detail(ctx)
    frame = rng.choice(_DECISION_CORRECTIONS)
    reason = rng.choice(REASONS)
    text = frame.format(**{**s, "reason": reason, "old": old, "new": new, "detail": clause})
    return _Draft(
        family="decision",
        kind=CORRECTION,
        text=text,
        day=prev.day + rng.randint(30, 240),
        project=prev.project,
        subject=prev.subject,
        unique=unique,
        ref=ref,
        slots={**s, "chosen": new, "rejected": old, "old": old, "reason": reason},
        prev=prev,
    )


def _make_pref(ctx: _Context) -> _Draft | None:
    rng = ctx.rng
    topics = tuple(PREF_TOPICS)
    for _ in range(20):
        project = rng.choice(ctx.projects) if rng.random() < 0.55 else None
        topic = rng.choice(topics)
        if ctx.claim(f"pref:{project or '*'}:{topic}"):
            break
    else:
        return None
    value, alt = rng.sample(PREF_TOPICS[topic], 2)
    clause, unique, ref = _pref_detail(ctx)
    frame = rng.choice(_PREF_FRAMES if project is None else _PREF_PROJECT_FRAMES)
    slots = {
        "topic": topic,
        "value": value,
        "alt": alt,
        "project": project or "",
        "Project": _cap(project or ""),
        "topic_full": topic if project is None else f"{topic} in {project}",
    }
    return _Draft(
        family="pref",
        kind=PREFERENCE,
        text=_cap(frame.format(**slots, detail=clause)),
        day=ctx.day(),
        project=project,
        subject=f"pref:{project or '*'}:{topic}",
        unique=unique,
        ref=ref,
        slots=slots,
    )


def _correct_pref(ctx: _Context, prev: _Draft) -> _Draft:
    rng = ctx.rng
    s = prev.slots
    old = s["value"]
    new = _pick_other(rng, PREF_TOPICS[s["topic"]], old)
    clause, unique, ref = _pref_detail(ctx)
    frame = rng.choice(_PREF_CORRECTIONS)
    return _Draft(
        family="pref",
        kind=CORRECTION,
        text=_cap(frame.format(topic_full=s["topic_full"], old=old, new=new, detail=clause)),
        day=prev.day + rng.randint(14, 300),
        project=prev.project,
        subject=prev.subject,
        unique=unique,
        ref=ref,
        slots={**s, "value": new, "alt": old, "old": old},
        prev=prev,
    )


def _make_person(ctx: _Context, first: str | None = None, avoid: Sequence[str] = ()) -> _Draft:
    rng = ctx.rng
    while True:
        name = first or rng.choice(FIRST_NAMES)
        last = rng.choice(SURNAMES)
        if (name, last) not in ctx.persons:
            break
    ctx.persons.add((name, last))
    role = rng.choice([r for r in ROLES if r not in avoid])
    city = rng.choice([c for c in CITIES if c not in avoid])
    team = rng.choice(TEAMS)
    clause, unique, ref = _person_detail(ctx)
    slots = {"first": name, "last": last, "role": role, "city": city, "team": team}
    return _Draft(
        family="person",
        kind=PERSON,
        text=rng.choice(_PERSON_FRAMES).format(**slots, detail=clause),
        day=ctx.day(),
        project=None,
        subject=f"person:{name} {last}",
        unique=unique,
        ref=ref,
        slots=slots,
    )


def _correct_person(ctx: _Context, prev: _Draft) -> _Draft:
    rng = ctx.rng
    s = prev.slots
    what = "city" if rng.random() < 0.6 else "role"
    old = s[what]
    new = _pick_other(rng, CITIES if what == "city" else ROLES, old)
    frames = _PERSON_CITY_CORRECTIONS if what == "city" else _PERSON_ROLE_CORRECTIONS
    clause, unique, ref = _person_detail(ctx)
    return _Draft(
        family="person",
        kind=CORRECTION,
        text=rng.choice(frames).format(**{**s, "old": old, "new": new, "detail": clause}),
        day=prev.day + rng.randint(30, 300),
        project=None,
        subject=prev.subject,
        unique=unique,
        ref=ref,
        slots={**s, what: new, "old": old, "what": what},
        prev=prev,
    )


def _make_project_fact(ctx: _Context) -> _Draft | None:
    rng = ctx.rng
    attrs = tuple(_PROJECT_ATTRS)
    areas = tuple(AREAS)
    for _ in range(20):
        project = rng.choice(ctx.projects)
        attr = rng.choice(attrs)
        area = rng.choice(areas) if _PROJECT_ATTRS[attr][3] and rng.random() < 0.7 else ""
        if ctx.claim(f"project:{project}:{area or '*'}:{attr}"):
            break
    else:
        return None
    noun, values, preds, _ = _PROJECT_ATTRS[attr]
    value = rng.choice(values)
    frames = _PROJECT_AREA_SUBJECTS if area else _PROJECT_SUBJECTS
    subj = rng.choice(frames).format(project=project, area=area)
    clause, unique, ref = _project_detail(ctx, project)
    text = f"{rng.choice(_PROJECT_PREFIXES)}{subj} {rng.choice(preds).format(v=value)}{clause}."
    # Queries name the component in words the memory does not use.
    subj_q = rng.choice(_PROJECT_AREA_QUERY_SUBJECTS).format(project=project, area=area)
    subj_q = subj_q if area else project
    slots = {
        "project": project,
        "area": area,
        "attr": attr,
        "noun": noun,
        "value": value,
        "subj_q": subj_q,
    }
    return _Draft(
        family="project",
        kind=PROJECT,
        text=_cap(text),
        day=ctx.day(),
        project=project,
        subject=f"project:{project}:{area or '*'}:{attr}",
        unique=unique,
        ref=ref,
        slots=slots,
    )


def _correct_project_fact(ctx: _Context, prev: _Draft) -> _Draft:
    rng = ctx.rng
    s = prev.slots
    noun, values, _, _ = _PROJECT_ATTRS[s["attr"]]
    old = s["value"]
    new = _pick_other(rng, values, old)
    frames = _PROJECT_AREA_SUBJECTS if s["area"] else _PROJECT_SUBJECTS
    subj = rng.choice(frames).format(project=s["project"], area=s["area"])
    clause, unique, ref = _project_detail(ctx, s["project"])
    text = rng.choice(_PROJECT_CORRECTIONS).format(
        subj=subj, Subj=_cap(subj), noun=noun, old=old, new=new, detail=clause
    )
    return _Draft(
        family="project",
        kind=CORRECTION,
        text=_cap(text),
        day=prev.day + rng.randint(20, 300),
        project=prev.project,
        subject=prev.subject,
        unique=unique,
        ref=ref,
        slots={**s, "value": new, "old": old},
        prev=prev,
    )


_ALL_TOOLS = tuple(sorted({t for tools in CATEGORIES.values() for t in tools}))


def _make_distractor(ctx: _Context) -> _Draft:
    rng = ctx.rng
    project = rng.choice(ctx.projects)
    d, unique = _distractor_detail(ctx)
    tool, tool2 = rng.sample(_ALL_TOOLS, 2)
    slots = {
        "project": project,
        "Project": _cap(project),
        "host": rng.choice(HOSTS),
        "area": rng.choice(tuple(AREAS)),
        "team": rng.choice(TEAMS),
        "tool": tool,
        "tool2": tool2,
        "small": str(rng.randint(2, 900)),
    }
    return _Draft(
        family="distractor",
        kind=DISTRACTOR,
        text=rng.choice(_DISTRACTOR_FRAMES).format(**slots, d=d),
        day=ctx.day(0, 1100),
        project=project,
        subject=f"note:{project}",
        unique=unique,
        ref=d,
        slots=slots,
    )


_CORRECTORS: dict[str, Callable[[_Context, _Draft], _Draft]] = {
    "env": _correct_env,
    "decision": _correct_decision,
    "pref": _correct_pref,
    "person": _correct_person,
    "project": _correct_project_fact,
}
_CORRECTION_WEIGHTS = (("env", 45), ("decision", 15), ("project", 15), ("pref", 12), ("person", 13))


# ------------------------------------------------------------------ the corpus


def _allocate(size: int) -> dict[str, int]:
    counts = {
        "person": max(5, round(size * 0.08)),
        "correction": max(5, round(size * 0.08)),
        "env": round(size * 0.20),
        "decision": round(size * 0.17),
        "project": round(size * 0.11),
        "pref": max(4, round(size * 0.08)),
    }
    counts["distractor"] = size - sum(counts.values())
    return counts


def _take(rng: random.Random, items: list[_Draft]) -> _Draft:
    """Remove and return a random item in O(1) (the order of the rest does not matter)."""
    i = rng.randrange(len(items))
    items[i], items[-1] = items[-1], items[i]
    return items.pop()


def _build_memories(ctx: _Context, size: int) -> list[_Draft]:
    rng = ctx.rng
    counts = _allocate(size)
    drafts: list[_Draft] = []
    # At least three people called Luis, with different surnames, roles and places.
    luis: list[_Draft] = []
    for _ in range(3):
        taken = [v for d in luis for v in (d.slots["role"], d.slots["city"])]
        luis.append(_make_person(ctx, "Luis", avoid=taken))
    drafts += luis
    drafts += [_make_person(ctx) for _ in range(counts["person"] - 3)]
    makers: dict[str, Callable[[_Context], _Draft | None]] = {
        "env": _make_env,
        "decision": _make_decision,
        "project": _make_project_fact,
        "pref": _make_pref,
    }
    for family, maker in makers.items():
        for _ in range(counts[family]):
            drafts.append(maker(ctx) or _make_distractor(ctx))
    drafts += [_make_distractor(ctx) for _ in range(counts["distractor"])]

    # Corrections: mostly of an original, sometimes of an earlier correction (a chain of 3+).
    originals = {f: [d for d in drafts if d.family == f] for f in _CORRECTORS}
    open_tails: dict[str, list[_Draft]] = {f: [] for f in _CORRECTORS}
    families = [f for f, _ in _CORRECTION_WEIGHTS]
    weights = [w for _, w in _CORRECTION_WEIGHTS]
    for _ in range(counts["correction"]):
        family = rng.choices(families, weights)[0]
        if not open_tails[family] or rng.random() >= 0.2:
            if not originals[family]:
                family = next((f for f in families if originals[f]), family)
            source = originals[family] or open_tails[family]
        else:
            source = open_tails[family]
        target = _take(rng, source)
        new = _CORRECTORS[target.family](ctx, target)
        target.superseded = True
        open_tails[target.family].append(new)
        drafts.append(new)
    for i, d in enumerate(drafts):
        d.seq = i
    drafts.sort(key=lambda d: (d.day, d.seq))
    for i, d in enumerate(drafts):
        d.index = i
        d.id_hint = f"m{i:05d}"
    return drafts


def _to_memory(d: _Draft) -> Memory:
    return Memory(
        id_hint=d.id_hint,
        text=d.text,
        date=date.fromordinal(d.day).isoformat(),
        project=d.project,
        kind=d.kind,
        supersedes=d.prev.id_hint if d.prev is not None else None,
        unique=d.unique,
        subject=d.subject,
    )


# ------------------------------------------------------------------ queries


@dataclass(slots=True)
class _Option:
    """A candidate query with the subject words a lexical search would need."""

    text: str
    words: tuple[str, ...]


class _Postings:
    """Which memories hold each word, built only for the words the queries rely on."""

    def __init__(self, drafts: Sequence[_Draft], words: Iterable[str]) -> None:
        wanted = set(words)
        self.postings: dict[str, set[int]] = {w: set() for w in wanted}
        for d in drafts:
            for tok in set(_tokens(d.text)) & wanted:
                self.postings[tok].add(d.index)

    def holders(self, words: Sequence[str]) -> set[int]:
        sets = sorted((self.postings.get(w, set()) for w in set(words)), key=len)
        if not sets:
            return set()
        out = set(sets[0])
        for s in sets[1:]:
            out &= s
        return out


def _words(*values: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for v in values for t in _tokens(v)))


def _subject_options(d: _Draft, rng: random.Random) -> list[_Option]:
    s = d.slots
    out: list[_Option] = []
    if d.family == "env":
        for frame in _ENV_SUBJECT_QUERIES:
            out.append(_Option(frame.format(**s), _words(s["project"], s["host"], s["noun"])))
    elif d.family == "decision":
        for frame, keys in _DECISION_SUBJECT_QUERIES:
            out.append(_Option(frame.format(**s), _words(*(s[k] for k in keys))))
    elif d.family == "pref":
        for frame in _PREF_SUBJECT_QUERIES:
            out.append(_Option(frame.format(**s), _words(s["topic"], s["project"])))
    elif d.family == "person":
        for frame in _PERSON_SUBJECT_QUERIES:
            out.append(_Option(frame.format(**s), _words(s["first"], s["last"])))
    elif d.family == "project":
        for frame in _PROJECT_SUBJECT_QUERIES:
            words = _words(s["project"], s["area"], s["noun"])
            out.append(_Option(frame.format(**s), words))
    rng.shuffle(out)
    return out


def _update_options(d: _Draft, rng: random.Random) -> list[_Option]:
    s = d.slots
    out: list[_Option] = []
    if d.family == "env":
        for frame in _ENV_UPDATE_QUERIES:
            if "{old}" in frame and s["attr"] in ("port", "address"):
                continue
            words = _words(s["project"], s["host"], s["noun"])
            if "{old}" in frame:
                words = _words(s["project"], s["host"], s["old"])
            out.append(_Option(frame.format(**s), words))
    elif d.family == "decision":
        for frame in _DECISION_UPDATE_QUERIES:
            out.append(_Option(frame.format(**s), _words(s["project"], s["area"], s["old"])))
    elif d.family == "pref":
        for frame in _PREF_UPDATE_QUERIES:
            extra = (s["old"],) if "{old}" in frame else ()
            out.append(_Option(frame.format(**s), _words(s["topic"], s["project"], *extra)))
    elif d.family == "person":
        for frame in _PERSON_UPDATE_QUERIES[s["what"]]:
            out.append(_Option(frame.format(**s), _words(s["first"], s["last"])))
    elif d.family == "project":
        for frame in _PROJECT_UPDATE_QUERIES:
            words = _words(s["project"], s["area"], s["noun"])
            out.append(_Option(frame.format(**s), words))
    rng.shuffle(out)
    return out


def _detail_query(d: _Draft, rng: random.Random) -> str:
    frames = _DETAIL_QUERIES_COMMON + _DETAIL_QUERIES[d.family]
    frame = rng.choice(frames)
    text = frame.format(ref=d.ref, project=d.project or "")
    return _cap(text)


def _chain(d: _Draft) -> list[_Draft]:
    out = [d]
    while out[-1].prev is not None:
        prev = out[-1].prev
        assert prev is not None
        out.append(prev)
    return out


def _query_counts(size: int) -> dict[str, int]:
    total = min(400, max(80, size // 2))
    counts = {
        UPDATE: round(total * 0.15),
        AMBIGUOUS_QUERY: max(6, round(total * 0.10)),
        NEVER_STORED: round(total * 0.15),
    }
    counts[TARGETED] = total - sum(counts.values())
    return counts


def _build_queries(ctx: _Context, drafts: list[_Draft], size: int) -> list[Query]:
    rng = ctx.rng
    counts = _query_counts(size)
    current = [d for d in drafts if not d.superseded]
    by_family: dict[str, list[_Draft]] = {}
    for d in current:
        by_family.setdefault(d.family, []).append(d)
    for group in by_family.values():
        rng.shuffle(group)

    # Targeted: stratified by family, round robin; subject wording when it is unambiguous.
    picks: list[_Draft] = []
    order = sorted(by_family)
    cursor = dict.fromkeys(order, 0)
    while len(picks) < counts[TARGETED]:
        progressed = False
        for fam in order:
            group = by_family[fam]
            if len(picks) < counts[TARGETED] and cursor[fam] < len(group):
                picks.append(group[cursor[fam]])
                cursor[fam] += 1
                progressed = True
        if not progressed:
            for fam in order:
                cursor[fam] = 0
    chained_tails = [d for d in current if d.prev is not None]
    rng.shuffle(chained_tails)

    subject_options: dict[int, list[_Option]] = {}
    for d in picks:
        if d.prev is None and d.family != "distractor" and d.index not in subject_options:
            subject_options[d.index] = _subject_options(d, rng)
    update_options = {d.index: _update_options(d, rng) for d in chained_tails}
    every = [o for opts in (*subject_options.values(), *update_options.values()) for o in opts]
    postings = _Postings(drafts, (w for o in every for w in o.words))

    queries: list[Query] = []
    seen: set[str] = set()

    def add(query: Query) -> None:
        if query.text not in seen:
            seen.add(query.text)
            queries.append(query)

    used_subject: set[int] = set()
    for d in picks:
        option = None
        if d.index in subject_options and d.index not in used_subject and rng.random() < 0.4:
            for opt in subject_options[d.index]:
                if opt.words and postings.holders(opt.words) == {d.index}:
                    option = opt
                    break
        if option is not None:
            used_subject.add(d.index)
            add(Query(text=option.text, kind=TARGETED, expected=d.id_hint, expected_status=FOUND))
            continue
        for _ in range(5):
            text = _detail_query(d, rng)
            if text not in seen:
                break
        add(
            Query(
                text=text,
                kind=TARGETED,
                expected=d.id_hint,
                expected_status=FOUND,
                names_memory=True,
            )
        )

    # Updates: each chain's newest memory expected first; only wordings whose subject
    # words occur in that chain alone.
    made = 0
    rounds = 0
    while made < counts[UPDATE] and chained_tails and rounds < 4:
        rounds += 1
        for tail in chained_tails:
            if made >= counts[UPDATE]:
                break
            chain = _chain(tail)
            members = {c.index for c in chain}
            options = update_options[tail.index]
            while options:
                opt = options.pop()
                holders = postings.holders(opt.words)
                if holders <= members and {tail.index, chain[1].index} <= holders:
                    before = len(queries)
                    add(
                        Query(
                            text=_cap(opt.text),
                            kind=UPDATE,
                            expected=tail.id_hint,
                            expected_status=FOUND,
                            outdated=tuple(c.id_hint for c in chain[1:]),
                        )
                    )
                    made += len(queries) - before
                    break

    # Ambiguous: bare first names that at least three people share.
    people: dict[str, list[_Draft]] = {}
    for d in current:
        if d.family == "person":
            people.setdefault(d.slots["first"], []).append(d)
    shared = sorted((n for n, ds in people.items() if len(ds) >= 3), key=lambda n: n != "Luis")
    # Luis first, in a few wordings, then every shared name in turn.
    pairs = [("Luis", frame) for frame in _AMBIGUOUS_QUERIES[:3] if "Luis" in people]
    for turn in range(len(_AMBIGUOUS_QUERIES)):
        for k, name in enumerate(shared):
            pair = (name, _AMBIGUOUS_QUERIES[(turn + k) % len(_AMBIGUOUS_QUERIES)])
            if pair not in pairs:
                pairs.append(pair)
    for name, frame in pairs[: counts[AMBIGUOUS_QUERY]]:
        add(
            Query(
                text=frame.format(first=name),
                kind=AMBIGUOUS_QUERY,
                expected=None,
                expected_status=AMBIGUOUS,
                candidates=tuple(sorted(d.id_hint for d in people[name])),
            )
        )

    # Never stored: wording from the store, the subject from nowhere in it.
    made = 0
    attempts = 0
    while made < counts[NEVER_STORED] and attempts < counts[NEVER_STORED] * 5:
        attempts += 1
        frame, key = rng.choice(_NEVER_QUERIES)
        slots = {
            "topic": rng.choice(_NEVER_TOPICS),
            "rtool": rng.choice(_NEVER_TOOLS),
            "rfirst": rng.choice(_NEVER_FIRST),
            "project": rng.choice(ctx.projects),
            "host": rng.choice(HOSTS),
            "area": rng.choice(tuple(AREAS)),
            "surname": rng.choice(SURNAMES),
            "prefix": rng.choice(_TICKET_PREFIXES),
            "number": str(ctx.pool.number()),
            "codename": ctx.pool.codename(),
            "team": rng.choice(TEAMS),
            "city": rng.choice(CITIES),
        }
        before = len(queries)
        add(
            Query(
                text=_cap(frame.format(**slots)),
                kind=NEVER_STORED,
                expected=None,
                expected_status=NOT_FOUND,
                unique=slots[key],
            )
        )
        made += len(queries) - before

    rng.shuffle(queries)
    return queries


def _build_extra(ctx: _Context, after: int, count: int = EXTRA_MEMORIES) -> list[Memory]:
    out = []
    makers = (_make_env, _make_decision, _make_project_fact, _make_pref)
    for i in range(count):
        d = makers[i % len(makers)](ctx) if i % 3 else _make_distractor(ctx)
        if d is None:
            d = _make_distractor(ctx)
        d.day = after + 1 + i
        d.id_hint = f"x{i:03d}"
        out.append(_to_memory(d))
    return out


def generate(size: int, seed: int = 0) -> Corpus:
    """Build a corpus of ``size`` memories and its queries; the same for the same seed.

    Raises:
        ValueError: ``size`` is outside 50..50,000.
    """
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"size must be between {MIN_SIZE} and {MAX_SIZE}, not {size}")
    rng = random.Random(f"ihmt-bench-memories:{seed}:{size}")
    n_projects = min(len(PROJECTS), max(4, size // 150))
    ctx = _Context(rng=rng, pool=_Pool(rng), projects=rng.sample(PROJECTS, n_projects))
    drafts = _build_memories(ctx, size)
    # The store refuses a memory dated in the future: the largest corpora, whose chains
    # of corrections run past the latest day, move back as a whole (the order stays).
    late = max(d.day for d in drafts) + EXTRA_MEMORIES - _LATEST_DAY
    for d in drafts if late > 0 else ():
        d.day -= late
    queries = _build_queries(ctx, drafts, size)
    extra = _build_extra(ctx, max(d.day for d in drafts))
    return Corpus(
        size=size,
        seed=seed,
        memories=tuple(_to_memory(d) for d in drafts),
        queries=tuple(queries),
        extra=tuple(extra),
    )


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Show a generated corpus.")
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=2, help="examples per kind")
    args = parser.parse_args(argv)
    corpus = generate(args.size, args.seed)
    by_id = {m.id_hint: m for m in corpus.memories}
    for kind in MEMORY_KINDS:
        group = [m for m in corpus.memories if m.kind == kind]
        print(f"== {kind}: {len(group)}")
        for m in group[: args.show]:
            note = f"  (supersedes {m.supersedes})" if m.supersedes else ""
            print(f"  {m.id_hint} {m.date} [{m.project or 'global'}] {m.text}{note}")
    for qkind in QUERY_KINDS:
        qs = [q for q in corpus.queries if q.kind == qkind]
        print(f"== query {qkind}: {len(qs)}")
        for q in qs[: args.show]:
            target = by_id[q.expected].text if q.expected else q.expected_status
            print(f"  {q.text!r} -> {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
