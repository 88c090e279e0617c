"""find_code by behaviour: questions phrased by what code does, with and without meaning.

    python tools/bench/find_code.py [--out FILE]

The codebase is this repository's own ``packages/*/src`` (copied to a temporary folder and
indexed with ``ProjectIndex``). Each question describes a function by what it does, in
the words a user would use rather than its name; the answer is right when the symbol
``find_code`` puts first is the expected one. The same questions run twice: words only,
then with the semantic layer re-ranking BM25's first candidates. Reported: hits@1, hits
in the first candidates listed, and the median time per question (warm).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ihmt_mcp import ProjectIndex
from ihmt_navigator import load_embedder

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"

QUESTIONS: list[tuple[str, str]] = [
    ("where do we refuse to save text that holds an API key or a password?", "find_secrets"),
    ("how is a file written so that a crash never leaves half of it?", "atomic_write"),
    ("where do we flush a directory so a rename survives a power cut?", "fsync_dir"),
    ("what removes leftover temporary files of writers that died?", "remove_temp_files"),
    ("how are accents and upper case removed from a word before indexing?", "fold"),
    ("which function cuts Spanish and English suffixes off words?", "stem"),
    ("how do we guess the character encoding of bytes read from disk?", "decode"),
    ("where is the date inside a line of text recognised?", "find_date"),
    ("what decides the document type of a text, code or journal or notes?", "detect_document"),
    ("how do we pick the part of a long memory that answers the question?", "best_passage"),
    ("where is the id of a summary node derived from its children?", "branch_id"),
    ("what waits for the exclusive lock held by another process?", "acquire"),
    ("how do we refuse a project folder like the home directory or root?", "refuse_unsafe_root"),
    ("which files of a project are skipped because gitignore says so?", "ignored"),
    ("where is the JSON an agent sends to a hook parsed?", "parse_input"),
    ("what finds the memories to put in front of the model for a prompt?", "recall_for"),
    ("what tells whether a question and a memory are in different languages?", "language_of"),
    ("where is the value that looks like a random token measured for randomness?", "_entropy"),
    ("how do we tell a socket or a device file apart from a regular file?", "special_kind"),
    ("how many tokens does a text cost, roughly?", "estimate_tokens"),
]


def _symbol_of(answer: str) -> str:
    """The symbol named on the first line of a find_code answer (``file:1-9 · name``)."""
    first = answer.splitlines()[0] if answer else ""
    return first.rsplit(" · ", 1)[-1].split(" (", 1)[0].strip() if " · " in first else ""


def _run(folder: Path, base: Path, embedded: bool) -> dict[str, object]:
    embedder = load_embedder("on")[0] if embedded else None
    index = ProjectIndex(folder, base, embedder=embedder)
    try:
        index.sync()
        rows, times = [], []
        for question, expected in QUESTIONS:
            index.find(question)  # warm: the candidates' vectors are written once
            started = time.perf_counter()
            answer = index.find(question)
            times.append((time.perf_counter() - started) * 1000)
            first = _symbol_of(answer)
            listed = [line[2:] for line in answer.splitlines() if line.startswith("- ")]
            rows.append(
                {
                    "question": question,
                    "expected": expected,
                    "first": first,
                    "hit1": first.rsplit(".", 1)[-1] == expected,
                    "listed": any(line.rsplit(" ", 1)[-1] == expected for line in listed),
                }
            )
    finally:
        index.close()
    return {
        "hits_at_1": sum(bool(r["hit1"]) for r in rows) / len(rows),
        "hits_listed": sum(bool(r["hit1"] or r["listed"]) for r in rows) / len(rows),
        "ms_p50": statistics.median(times),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "find_code.json")
    args = parser.parse_args(argv)
    if load_embedder("on")[0] is None:
        print("the [semantic] extra is not installed: nothing to compare", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ihmt-find-code-") as tmp:
        folder = Path(tmp) / "repo"
        for package in sorted((ROOT / "packages").iterdir()):
            if (package / "src").is_dir():
                shutil.copytree(package / "src", folder / package.name / "src")
        words = _run(folder, Path(tmp) / "words", embedded=False)
        meaning = _run(folder, Path(tmp) / "meaning", embedded=True)
    print("| find_code, 20 questions by behaviour | words only | words + meaning |")
    print("|---|---|---|")
    for key, label in (("hits_at_1", "right symbol first"), ("hits_listed", "first or listed")):
        print(f"| {label} | {words[key]:.2f} | {meaning[key]:.2f} |")
    print(f"| warm ms p50 | {words['ms_p50']:.1f} | {meaning['ms_p50']:.1f} |")
    for a, b in zip(words["rows"], meaning["rows"], strict=True):  # type: ignore[call-overload]
        if a["hit1"] != b["hit1"] or not b["hit1"]:
            print(f"  {b['expected']:<20} words: {a['first']:<28} meaning: {b['first']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"bench": "find_code", "words": words, "meaning": meaning}, indent=1) + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
