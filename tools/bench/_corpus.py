"""A deterministic generator of agent-memory-like text for the benchmarks.

Memories share a small vocabulary of projects, hosts, tools and people on purpose (the
way a real memory does), and each carries one unique detail so a query can target it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PROJECTS = ["falcon", "hawk", "osprey", "kestrel", "heron", "wren", "ibis", "plover"]
HOSTS = ["staging", "prod-eu", "prod-us", "ci-runner", "bastion", "db-primary", "cache", "dev-box"]
TOOLS = [
    "PostgreSQL",
    "Redis",
    "Kafka",
    "Terraform",
    "Pulumi",
    "nginx",
    "Grafana",
    "Celery",
    "FastAPI",
    "Django",
    "React",
    "Kubernetes",
    "Docker",
    "Jenkins",
    "GitHub Actions",
]
PEOPLE = ["Luis", "Ana", "Marta", "Tom", "Priya", "Kenji", "Sara", "Omar"]
SURNAMES = ["García", "Marín", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak"]
TEMPLATES = [
    "We decided to use {tool} for the {project} {area} because {reason}; detail {code}.",
    "The {host} host of {project} runs {tool} on port {port}, reference {code}.",
    "{person} {surname} prefers {tool} for {area} work; noted as {code}.",
    "I prefer short commit messages and {tool} for {area}; the tag is {code}.",
    "{project} moved its {area} to {tool} in sprint {port}, ticket {code}.",
    "Reminder about {project}: the {area} runbook lives next to {tool}, key {code}.",
]
AREAS = ["scheduler", "billing", "search", "auth", "deploys", "metrics", "queue", "backups"]
REASONS = [
    "it is typed",
    "the team knows it",
    "it is cheaper",
    "latency matters",
    "we need audit logs",
    "it runs offline",
]


@dataclass(frozen=True)
class Memory:
    text: str
    code: str
    """The unique detail only this memory carries."""
    project: str
    tool: str


def _code(rng: random.Random, index: int) -> str:
    syllables = ["ka", "zu", "mi", "ro", "te", "va", "lo", "qui", "ne", "pa", "dor", "sil"]
    return "".join(rng.choice(syllables) for _ in range(3)) + str(index)


def memories(count: int, seed: int = 7) -> list[Memory]:
    """``count`` memories, the same ones for the same seed."""
    rng = random.Random(seed)
    out = []
    for index in range(count):
        values = {
            "tool": rng.choice(TOOLS),
            "project": rng.choice(PROJECTS),
            "area": rng.choice(AREAS),
            "reason": rng.choice(REASONS),
            "host": rng.choice(HOSTS),
            "port": str(rng.randint(1000, 9999)),
            "person": rng.choice(PEOPLE),
            "surname": rng.choice(SURNAMES),
            "code": _code(rng, index),
        }
        text = rng.choice(TEMPLATES).format(**values)
        out.append(
            Memory(text=text, code=values["code"], project=values["project"], tool=values["tool"])
        )
    return out
