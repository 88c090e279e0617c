"""Compact answers for long conversations: do they fit and do they keep the evidence?

    python tools/bench/compact.py                       # both ways of saving, the table
    python tools/bench/compact.py --mode session        # one memory per chat session
    python tools/bench/compact.py --show-failures 10    # and the answers that lost it

No public long-conversation set can be fetched here, so the conversations are written by
:func:`generate`: a few groups of friends (two or three speakers each) chatting over
several dated sessions, each turn a few sentences of chit-chat around the facts. Each fact
is one sentence said by one speaker on one date, and each question is about one fact, in
other words than the sentence (the speaker named, the answer not). Deterministic for a
seed; names and facts are invented here.

They are saved the two ways a user would:
  session  each session saved as one memory (``Memory.save``, dated): long memories
  export   each group's chat export (one ``[YYYY-MM-DD HH:MM] Name: text`` line per turn)
           ingested as a file (``Memory.ingest``), split by the chunkers

then every question is asked (top 5, the compact detail an agent reads). Figures:
  tokens med/p90   of the compact answer (``SearchResult.tokens``)
  evidence         the question's evidence sentence is in the compact answer
  R@1              the first memory holds the evidence sentence (its full text)
  NOT FOUND        answered NOT FOUND or AMBIGUOUS
  FOUND: …         the same figures among the FOUND answers only (what the rendering
                   decides; the rest is the decision's)
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TOP_K = 5

GROUPS = (
    ("Odile", "Tomasz"),
    ("Priyanka", "Lucan", "Leocadia"),
    ("Bertrand", "Ottilie"),
    ("Kwabena", "Yusra", "Fennimore"),
)

# (evidence said by the speaker, question about it with {n} the speaker, slot values)
FACTS: tuple[tuple[str, str, dict[str, tuple[str, ...]]], ...] = (
    (
        "We finally adopted a {breed} puppy last weekend and named him {pet}.",
        "What did {n} name the new {breed}?",
        {
            "breed": ("beagle", "corgi", "whippet", "dachshund", "spaniel"),
            "pet": ("Biscuit", "Pickle", "Juniper", "Pretzel", "Waffles"),
        },
    ),
    (
        "I just got back from four days walking the {trail} with my cousin.",
        "Which long-distance trail did {n} walk with a cousin?",
        {
            "trail": (
                "Lycian Way",
                "West Highland Way",
                "Kungsleden",
                "Camino Primitivo",
                "Alta Via 1",
                "Cotswold Way",
            )
        },
    ),
    (
        "On Monday I start as a {role} at {company}, which still feels unreal.",
        "What position is {n} starting at {company}?",
        {
            "role": ("sound engineer", "ward pharmacist", "museum archivist", "bike mechanic"),
            "company": ("Halvard Studios", "Brannoc Hospital", "Kelmscott Museum", "Spokehaus"),
        },
    ),
    (
        "I've been taking {instrument} lessons every Thursday evening with a retired teacher.",
        "Which instrument is {n} learning to play?",
        {"instrument": ("cello", "banjo", "bassoon", "harp", "accordion")},
    ),
    (
        "I'm halfway through {book}, a novel about {topic}.",
        "What novel is {n} reading these days?",
        {
            "book": ("The Salt Orchard", "Nine Winters in Tallinn", "A Lantern for Ruth"),
            "topic": ("lighthouse keepers", "a family of clockmakers", "rival beekeepers"),
        },
    ),
    (
        "I ran the {city} half marathon on Sunday and finished in {time}.",
        "How long did {n} take to finish the half marathon in {city}?",
        {
            "city": ("Ghent", "Ljubljana", "Aarhus", "Tartu"),
            "time": ("1 hour 52 minutes", "2 hours 4 minutes", "1 hour 47 minutes"),
        },
    ),
    (
        "For my sister's birthday I cooked {dish} and it actually worked.",
        "What dish did {n} make for the sister's birthday?",
        {
            "dish": (
                "a mushroom wellington",
                "saffron paella",
                "lamb tagine with apricots",
                "a three-layer carrot cake",
                "pierogi with sauerkraut",
            )
        },
    ),
    (
        "We're moving into a flat in {area} at the end of the month.",
        "Which neighbourhood is {n} moving to?",
        {"area": ("Stokes Croft", "Neukölln", "Gràcia", "Ostiense", "Kalamaja")},
    ),
    (
        "My new number is {phone}, the old one stopped working after I dropped it.",
        "What is {n}'s new phone number?",
        {
            "phone": (
                "+44 7700 900481",
                "+353 85 555 0142",
                "+34 612 345 908",
                "+44 7700 900736",
                "+31 6 5555 0193",
            )
        },
    ),
    (
        "The allergist confirmed I'm allergic to {thing}, so I read every label now.",
        "What is {n} allergic to, according to the allergist?",
        {"thing": ("hazelnuts", "shellfish", "sesame", "kiwi", "celery", "lupin")},
    ),
    (
        "I sold the old hatchback and bought a second-hand {car}.",
        "Which car did {n} buy to replace the hatchback?",
        {"car": ("Volvo estate", "Fiat Panda", "Skoda Octavia", "Renault Zoe", "Kia Niro")},
    ),
    (
        "I signed up for a {craft} class at the community centre on Saturdays.",
        "What Saturday class did {n} sign up for?",
        {"craft": ("pottery", "bookbinding", "stained glass", "woodturning", "silversmithing")},
    ),
    (
        "We saw {band} play at {venue} on Friday and my ears are still ringing.",
        "Which band did {n} see at {venue}?",
        {
            "band": ("The Paper Kites", "Big Thief", "Khruangbin", "Fontaines D.C."),
            "venue": ("the Roundhouse", "Paradiso", "the Olympia"),
        },
    ),
    (
        "For our anniversary {partner} gave me {gift}.",
        "What anniversary present did {n} get from {partner}?",
        {
            "partner": ("Rafe", "Annelie", "Colm", "Wendeline"),
            "gift": ("a vintage film camera", "a small telescope", "a hand-knitted blanket"),
        },
    ),
    (
        "The tomatoes failed again, but the {plant} on the balcony are thriving.",
        "Which plants are doing well on {n}'s balcony?",
        {"plant": ("chillies", "strawberries", "sweet peas", "runner beans", "courgettes")},
    ),
)

CHAT = (
    "Haha, that is so true.",
    "How was your weekend, by the way?",
    "Honestly, work has been relentless this week.",
    "The weather has been all over the place lately.",
    "Did you end up watching that series everyone keeps talking about?",
    "Anyway, enough about me.",
    "That sounds amazing, I'm really happy for you!",
    "We should catch up properly over coffee soon.",
    "My phone has been acting up all week, I swear it hates me.",
    "I barely slept last night because the neighbours had a party.",
    "Mum called again to ask when I'm visiting.",
    "I keep meaning to read more, but I end up scrolling instead.",
    "The new bakery on the corner is dangerously good.",
    "I've been trying to go to bed earlier, with mixed results.",
    "Oh no, that sounds stressful.",
    "Fingers crossed it all works out.",
    "We had a little birthday thing for a colleague on Tuesday.",
    "The train was late again this morning, of course.",
    "I finally cleaned out the garage, which took the whole afternoon.",
    "It's been ages since we went to a proper concert together.",
    "Let me know if you need a hand with anything.",
    "I tried a new recipe and it was a disaster, to be honest.",
    "My cousin is thinking about moving abroad next year.",
    "The kids are on holiday next week, so it'll be chaos.",
    "I can't believe it's already the end of the month.",
    "We should plan a weekend away before the summer gets busy.",
    "The car needs a service again, which is annoying.",
    "I started a new podcast about old shipwrecks, it's oddly relaxing.",
    "That reminds me, I still owe you a coffee.",
    "I've been walking to work when it's not raining.",
    "Sorry for the slow reply, it's been a long day.",
    "Tell me everything, I want all the details.",
    "I'm so proud of you, seriously.",
    "We watched an old film on Saturday and fell asleep halfway through.",
    "My back has been sore since I moved the sofa.",
    "Work wants everyone in the office three days a week now.",
    "I bought far too many plants at the market again.",
    "The gym was packed, so I just went for a run instead.",
    "Have you heard from the others lately?",
    "I'll send you the photos tonight.",
)


def norm(text: str) -> str:
    """NFKC, casefold, single spaces: how a sentence is looked for in an answer."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass
class Session:
    """One dated chat among a group: its turns, each (speaker, time, text)."""

    group: int
    number: int
    start: datetime
    speakers: tuple[str, ...]
    turns: list[tuple[str, datetime, str]] = field(default_factory=list)

    def text(self) -> str:
        """The session as one memory: a heading with its date, one line per turn."""
        when = f"{self.start:%d %B %Y}".lstrip("0")
        names = f"{', '.join(self.speakers[:-1])} and {self.speakers[-1]}"
        head = f"Chat between {names} on {when}"
        return "\n".join([head, *(f"{who}: {said}" for who, _, said in self.turns)])


@dataclass(frozen=True)
class Question:
    """A question about one fact, and the sentence that answers it."""

    text: str
    evidence: str
    session: int


def generate(
    seed: int = 0, sessions: int = 8, turns: int = 18
) -> tuple[list[Session], list[Question]]:
    """The conversations and their questions (deterministic for ``seed``)."""
    rng = random.Random(seed)
    out: list[Session] = []
    questions: list[Question] = []
    facts = [(e, q, slots) for e, q, slots in FACTS]
    used: dict[str, set[int]] = {}
    said_before: set[str] = set()
    day = datetime(2023, 3, 4, 18, 30)
    for group, speakers in enumerate(GROUPS):
        pool = [(who, i) for who in speakers for i in range(len(facts))]
        rng.shuffle(pool)
        for number in range(sessions):
            day += timedelta(days=rng.randint(3, 12), minutes=rng.randint(-90, 90))
            session = Session(group, number, day, speakers)
            # Three facts a session, said by speakers who have not said that kind before.
            chosen: list[tuple[str, int]] = []
            while pool and len(chosen) < 3:
                who, kind = pool.pop()
                if kind in used.setdefault(who, set()):
                    continue
                used[who].add(kind)
                chosen.append((who, kind))
            at = {rng.randrange(1, turns): fact for fact in chosen}
            clock = day
            for t in range(turns):
                who = speakers[t % len(speakers)] if t not in at else at[t][0]
                said = [rng.choice(CHAT) for _ in range(rng.randint(3, 5))]
                if t in at:
                    evidence_of, asked_of, slots = facts[at[t][1]]
                    # Values no one else said in these words: the evidence is one sentence.
                    for _ in range(20):
                        values = {k: rng.choice(v) for k, v in slots.items()}
                        evidence = evidence_of.format(**values)
                        if evidence not in said_before:
                            said_before.add(evidence)
                            said.insert(rng.randint(1, len(said) - 1), evidence)
                            question = asked_of.format(n=who, **values)
                            questions.append(Question(question, evidence, len(out)))
                            break
                clock += timedelta(minutes=rng.randint(1, 6))
                session.turns.append((who, clock, " ".join(said)))
            out.append(session)
    return out, questions


def export_text(sessions: list[Session], group: int) -> str:
    """A group's chat export: one timestamped line per turn, every session in order."""
    lines = []
    for session in sessions:
        if session.group == group:
            lines.extend(f"[{at:%Y-%m-%d %H:%M}] {who}: {said}" for who, at, said in session.turns)
    return "\n".join(lines) + "\n"


def save(memory: Any, sessions: list[Session], mode: str, folder: Path) -> None:
    """Save the conversations the way ``mode`` says (see the module docstring)."""
    if mode == "session":
        for session in sessions:
            memory.save(session.text(), date=f"{session.start:%Y-%m-%d}", project="")
        return
    paths = []
    for group in range(len(GROUPS)):
        path = folder / f"chat-{group}.txt"
        path.write_text(export_text(sessions, group), encoding="utf-8")
        paths.append(path)
    memory.ingest(paths, project="")


def ask(memory: Any, questions: list[Question]) -> list[dict[str, Any]]:
    """One row per question: the compact answer's tokens and what it kept."""
    store = memory.store
    rows = []
    for question in questions:
        result = memory.search(question.text, limit=TOP_K)
        first = ""
        if result.results:
            entry = store.entry(result.results[0].id)
            first = store.read_leaf(entry).text if entry is not None else ""
        evidence = norm(question.evidence)
        rows.append(
            {
                "query": question.text,
                "evidence": question.evidence,
                "status": result.status,
                "tokens": result.tokens,
                "kept": evidence in norm(result.compact),
                "r1": evidence in norm(first),
                "compact": result.compact,
            }
        )
    return rows


def figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The figures of one run (see the module docstring)."""
    tokens = sorted(r["tokens"] for r in rows)
    n = len(rows)
    found = [r for r in rows if r["status"] == "found"]
    return {
        "questions": n,
        "tokens_median": statistics.median(tokens),
        "tokens_p90": tokens[min(n - 1, int(0.9 * n))],
        "found_tokens_median": statistics.median(r["tokens"] for r in found) if found else 0,
        "evidence": sum(r["kept"] for r in rows) / n,
        "found_evidence": sum(r["kept"] for r in found) / len(found) if found else 0.0,
        "r1": sum(r["r1"] for r in rows) / n,
        "abstained": sum(r["status"] != "found" for r in rows) / n,
    }


def run(mode: str, seed: int, semantic: str) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Generate, save in a fresh memory, ask; the figures and the rows."""
    from ihmt_mcp import Memory

    sessions, questions = generate(seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        memory = Memory.init(folder / "store", semantic=semantic)
        try:
            save(memory, sessions, mode, folder)
            rows = ask(memory, questions)
        finally:
            memory.close()
    return figures(rows), rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("session", "export", "both"), default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--semantic", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--show-failures", type=int, default=0, metavar="N")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "compact.json")
    args = parser.parse_args(argv)
    modes = ("session", "export") if args.mode == "both" else (args.mode,)
    table = [
        "| saved as | questions | tokens med | tokens p90 | evidence | R@1 | NOT FOUND "
        "| FOUND: tokens med | FOUND: evidence |"
    ]
    table.append("|---|---|---|---|---|---|---|---|---|")
    results: dict[str, Any] = {}
    for mode in modes:
        started = time.perf_counter()
        got, rows = run(mode, args.seed, args.semantic)
        results[mode] = {"figures": got, "rows": rows}
        table.append(
            f"| {mode} | {got['questions']} | {got['tokens_median']:.0f} | {got['tokens_p90']} "
            f"| {got['evidence']:.2f} | {got['r1']:.2f} | {got['abstained']:.2f} "
            f"| {got['found_tokens_median']:.0f} | {got['found_evidence']:.2f} |"
        )
        print(f"{mode}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        lost = [r for r in rows if not r["kept"]][: args.show_failures]
        for row in lost:
            print(f"\n[{mode}] {row['query']} ({row['status']}, {row['tokens']} tokens)")
            print(f"  evidence: {row['evidence']}")
            print("  " + "\n  ".join(row["compact"].splitlines()[:6]))
    print("\n".join(table))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
