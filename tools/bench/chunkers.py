"""Benchmark ihmt-chunkers: splitting throughput and import time.

Measures MB/s for a generated 2,000-line Java file, the running interpreter's Python
standard library, a generated 1 MB journal and a generated 1 MB novel (all inputs are
deterministic), checks that every split reconstructs its input, and times
``import ihmt_chunkers`` in fresh subprocesses. Prints a table and writes JSON.

Run: ``python tools/bench/chunkers.py [--out PATH] [--repeat N] [--stdlib-limit N]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

from ihmt_chunkers import DocType, split

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tools" / "bench" / "results" / "chunkers.json"
IMPORT_BUDGET_MS = 150.0

_WORDS = [
    "river",
    "stone",
    "morning",
    "light",
    "window",
    "garden",
    "letter",
    "silence",
    "road",
    "winter",
    "harbour",
    "lamp",
    "shadow",
    "voice",
    "door",
    "field",
    "bread",
    "salt",
    "paper",
    "bridge",
    "candle",
    "market",
    "station",
    "mountain",
]
_NAMES = ["Ana", "Luis", "Marta", "Pablo", "Elena", "Tomás", "Lucía", "Jorge"]


def java_source(lines: int = 2000) -> str:
    """A realistic Java file of ``lines`` lines: nested classes, generics, annotations."""
    rng = random.Random(1)
    out = [
        "package com.example.bench;",
        "",
        "import java.util.ArrayList;",
        "import java.util.List;",
        "import java.util.Map;",
        "",
        "/** Generated for the chunkers benchmark. {braces} in a comment. */",
        "public class Bench<T extends Comparable<T>> {",
    ]
    index = 0
    while len(out) < lines - 20:
        index += 1
        if index % 7 == 0:
            out += [
                f"    public static final class Inner{index} {{",
                f"        private final Map<String, Integer> m{index} = new java.util.HashMap<>();",
                "",
                f"        int size{index}() {{",
                f"            return m{index}.size();",
                "        }",
                "    }",
                "",
            ]
            continue
        statements = [
            [f"        int acc = {rng.randrange(100)};"],
            [
                f"        for (int i = 0; i < {rng.randrange(5, 50)}; i++) {{",
                '            acc += i * 2; // "{not a block}"',
                "        }",
            ],
            [
                "        if (acc > 100) {",
                '            values.add((R) String.format("{%d}", acc));',
                "        }",
            ],
            ["        acc = Math.max(acc, key.hashCode());"],
        ]
        body = [line for group in statements[: rng.randrange(1, 5)] for line in group]
        out += [
            "    @Override" if index % 3 == 0 else "    /** Method doc. */",
            f"    public <R> int method{index}(List<R> values, T key) {{",
            *body,
            "        return acc;" if body[0].startswith("        int acc") else "        return 0;",
            "    }",
            "",
        ]
    while len(out) < lines - 1:
        out.append(f"    // filler comment {len(out)} {{ not code }}")
    out.append("}")
    return "\n".join(out) + "\n"


def journal_text(size: int = 1_000_000) -> str:
    """About ``size`` characters of dated journal entries, English and Spanish."""
    rng = random.Random(2)
    parts: list[str] = []
    total = 0
    day = 0
    months_es = ["enero", "febrero", "marzo", "abril", "mayo", "junio"]
    while total < size:
        day += 1
        month, dom = 1 + (day // 28) % 12, 1 + day % 28
        year = 2020 + day // 336
        if day % 3 == 0:
            header = f"{dom} de {months_es[(month - 1) % 6]} de {year}"
        elif day % 3 == 1:
            header = f"{year}-{month:02d}-{dom:02d}"
        else:
            header = (
                f"[{year}-{month:02d}-{dom:02d} {rng.randrange(8, 22)}:{rng.randrange(60):02d}]"
            )
        paragraphs = [
            " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(20, 90))).capitalize() + "."
            for _ in range(rng.randrange(1, 4))
        ]
        entry = f"{header}\n" + "\n\n".join(paragraphs) + "\n\n"
        parts.append(entry)
        total += len(entry)
    return "".join(parts)


def novel_text(size: int = 1_000_000) -> str:
    """About ``size`` characters of a novel: chapters, scene breaks, dialogue."""
    rng = random.Random(3)
    parts: list[str] = []
    total = 0
    chapter = 0
    while total < size:
        if not parts or rng.random() < 0.02:
            chapter += 1
            parts.append(f"Chapter {chapter}\n\n")
        elif rng.random() < 0.03:
            parts.append("***\n\n")
        if rng.random() < 0.3:
            name = rng.choice(_NAMES)
            line = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(4, 14)))
            parts.append(f'"{line.capitalize()}," {name} said.\n\n')
        else:
            sentences = [
                " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(8, 25))).capitalize() + "."
                for _ in range(rng.randrange(2, 9))
            ]
            parts.append(" ".join(sentences) + "\n\n")
        total += len(parts[-1])
    return "".join(parts)


def stdlib_texts(limit: int | None) -> list[str]:
    """The standard library's ``.py`` files that decode as UTF-8 (no site-packages)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    texts: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] in ("site-packages", "dist-packages"):
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if "\x00" not in text:
            texts.append(text)
        if limit is not None and len(texts) >= limit:
            break
    return texts


def measure(
    texts: list[str], run: Callable[[str], tuple[object, ...]], repeat: int
) -> dict[str, float]:
    """Best-of-``repeat`` throughput over ``texts``; checks reconstruction once."""
    size = sum(len(t.encode("utf-8")) for t in texts)
    best = float("inf")
    blocks = 0
    for attempt in range(repeat):
        start = time.perf_counter()
        results = [run(text) for text in texts]
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        if attempt == 0:
            blocks = sum(len(r) for r in results)
            for text, result in zip(texts, results, strict=True):
                joined = "".join(b.text for b in result)  # type: ignore[attr-defined]
                if joined != text:
                    raise SystemExit("reconstruction failed: the benchmark is invalid")
    return {
        "files": len(texts),
        "megabytes": size / 1e6,
        "seconds": best,
        "mb_per_s": size / 1e6 / best,
        "blocks": blocks,
    }


def import_time(module: str, runs: int = 7) -> float:
    """Median wall time (ms) of ``import module`` in a fresh interpreter."""
    code = (
        "import time; t = time.perf_counter(); import "
        + module
        + "; print((time.perf_counter() - t) * 1000)"
    )
    samples = []
    for _ in range(runs):
        completed = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        )
        samples.append(float(completed.stdout.strip()))
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write JSON")
    parser.add_argument("--repeat", type=int, default=3, help="runs per input (best is kept)")
    parser.add_argument("--stdlib-limit", type=int, default=None, help="max stdlib files")
    args = parser.parse_args(argv)

    java = java_source()
    # Warm the grammars so the first input does not pay their loading.
    split(java, doc_type=DocType.CODE, language="java")
    split("x = 1\ny = 2\n", doc_type=DocType.CODE, language="python")

    cases: dict[str, dict[str, float]] = {}
    cases["java 2,000 lines (pack)"] = measure(
        [java], lambda t: split(t, doc_type=DocType.CODE, language="java"), args.repeat
    )
    cases["java 2,000 lines (symbol)"] = measure(
        [java],
        lambda t: split(t, doc_type=DocType.CODE, language="java", mode="symbol"),
        args.repeat,
    )
    cases["python stdlib (symbol)"] = measure(
        stdlib_texts(args.stdlib_limit),
        lambda t: split(t, doc_type=DocType.CODE, language="python", mode="symbol"),
        1,
    )
    cases["journal 1 MB (temporal)"] = measure(
        [journal_text()], lambda t: split(t, doc_type=DocType.TEMPORAL), args.repeat
    )
    cases["novel 1 MB (narrative)"] = measure(
        [novel_text()], lambda t: split(t, doc_type=DocType.NARRATIVE), args.repeat
    )
    store_ms = import_time("ihmt_store")
    package_ms = import_time("ihmt_chunkers")

    print(f"{'input':<28} {'files':>6} {'MB':>8} {'seconds':>8} {'MB/s':>7} {'blocks':>8}")
    for name, row in cases.items():
        print(
            f"{name:<28} {row['files']:>6.0f} {row['megabytes']:>8.2f} {row['seconds']:>8.3f} "
            f"{row['mb_per_s']:>7.2f} {row['blocks']:>8.0f}"
        )
    verdict = "ok" if package_ms <= IMPORT_BUDGET_MS else "OVER BUDGET"
    print(
        f"import ihmt_chunkers: {package_ms:.1f} ms median (budget {IMPORT_BUDGET_MS:.0f} ms: "
        f"{verdict}); of which import ihmt_store alone: {store_ms:.1f} ms"
    )

    result = {
        "benchmark": "chunkers",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cases": cases,
        "import_ms": {"ihmt_chunkers": package_ms, "ihmt_store": store_ms},
        "import_budget_ms": IMPORT_BUDGET_MS,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
