"""The code tools on pinned real codebases: find_code's answers, project_map's speed.

    python tools/bench/find_code.py [--codebases rich click] [--runs 5] [--meaning]
                                    [--label after] [--out FILE]

The codebases are released packages' sources at fixed versions (``_codebases.py``:
rich 13.7.1, click 8.1.7, each its sdist as PyPI serves it), so the figures move only
when IHMT does. Per codebase:

- **named**: 20 symbols asked by name, each three ways (``Class.method``, "where is
  ``Class.method`` defined?" — ``echo()`` for a bare word —, ``package.module.Class.method``);
  right when the first answer is that symbol in its file. Target 1.00.
- **behaviour**: 20 questions phrased by what the code does, in a user's words; right
  when the first answer is the expected symbol (one of them, where two would do), and
  "listed" when it is first or among the other candidates.
- **speed**, the median of ``--runs``: the first ``project_map`` into an empty index
  (target <= 3 s); ``find_code`` right after it ("then find_code": a map answers from its
  manifest and writes the store behind it, so this call waits for what is left of that,
  and the two together are all the work of a first index); the same map with nothing
  changed; and edit -> fresh: a function appended to a file, then ``find_code`` by its
  name (target <= 0.1 s). Wall-clock
  seconds, and this process's CPU seconds beside them (on a shared machine the clock
  also counts other processes' turns; the CPU time does not, nor the waits for disk).
  The JSON also holds the kernel's share of that CPU time (``*_sys_s``): creating files
  costs kernel time that grows when other processes write to the same disk.

``--meaning`` adds the questions re-ranked by the semantic layer (``ProjectIndex``'s
embedder; ``Memory`` does not pass one). Run it with another checkout's interpreter to
measure that code on the same questions (``--label`` names the run in the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _codebases import CODEBASES, Codebase, source

from ihmt_mcp import ProjectIndex

RESULTS = Path(__file__).resolve().parent / "results"

Expected = tuple[str, ...]
"""``file:symbol`` forms any of which is a right first answer."""

NAMED: dict[str, list[str]] = {
    "rich": [
        "rich/console.py:Console.print",
        "rich/console.py:Console.export_html",
        "rich/console.py:ConsoleOptions.update_width",
        "rich/text.py:Text.from_markup",
        "rich/text.py:Text.wrap",
        "rich/table.py:Table.add_row",
        "rich/segment.py:Segment.split_lines",
        "rich/style.py:Style.parse",
        "rich/color.py:Color.parse",
        "rich/progress.py:Progress.add_task",
        "rich/syntax.py:Syntax.from_path",
        "rich/panel.py:Panel.fit",
        "rich/tree.py:Tree.add",
        "rich/live.py:Live.refresh",
        "rich/layout.py:Layout.split_row",
        "rich/traceback.py:Traceback.from_exception",
        "rich/ansi.py:AnsiDecoder.decode",
        "rich/prompt.py:Confirm.process_response",
        "rich/cells.py:cell_len",
        "rich/pretty.py:pretty_repr",
    ],
    "click": [
        "src/click/core.py:Context.invoke",
        "src/click/core.py:Context.fail",
        "src/click/core.py:BaseCommand.main",
        "src/click/core.py:Group.add_command",
        "src/click/core.py:Parameter.get_default",
        "src/click/core.py:Option.prompt_for_value",
        "src/click/types.py:Choice.convert",
        "src/click/types.py:Path.convert",
        "src/click/formatting.py:HelpFormatter.write_usage",
        "src/click/parser.py:OptionParser.parse_args",
        "src/click/testing.py:CliRunner.invoke",
        "src/click/utils.py:echo",
        "src/click/termui.py:style",
        "src/click/termui.py:confirm",
        "src/click/termui.py:progressbar",
        "src/click/utils.py:get_app_dir",
        "src/click/formatting.py:wrap_text",
        "src/click/decorators.py:pass_context",
        "src/click/decorators.py:version_option",
        "src/click/shell_completion.py:ShellComplete.source",
    ],
}

NAMED_FILE = {e.split(":")[1]: e.split(":")[0] for names in NAMED.values() for e in names}
"""The file of each named symbol."""

BEHAVIOUR: dict[str, list[tuple[str, Expected]]] = {
    "rich": [
        (
            "how is the printable width of a string with wide east asian characters measured?",
            ("rich/cells.py:cell_len",),
        ),
        (
            "where are markup tags like [bold red] parsed into styled text?",
            ("rich/markup.py:render",),
        ),
        (
            "how does a progress task estimate the time remaining?",
            ("rich/progress.py:Task.time_remaining",),
        ),
        (
            "which function converts a color name or hex code into a color?",
            ("rich/color.py:Color.parse",),
        ),
        (
            "how is a style definition such as 'bold red on white' parsed?",
            ("rich/style.py:Style.parse",),
        ),
        ("where is text wrapped into lines that fit a width?", ("rich/text.py:Text.wrap",)),
        ("what formats a number of bytes as kB or MB?", ("rich/filesize.py:decimal",)),
        (
            "how does the console detect whether it is writing to a terminal?",
            ("rich/console.py:Console.is_terminal",),
        ),
        (
            "where are ANSI escape sequences turned back into styled text?",
            ("rich/ansi.py:AnsiDecoder.decode",),
        ),
        (
            "how are the widths of a table's columns calculated?",
            ("rich/table.py:Table._calculate_column_widths",),
        ),
        (
            "which code highlights source code with a pygments lexer?",
            ("rich/syntax.py:Syntax.highlight",),
        ),
        (
            "how is the recorded console output exported as HTML?",
            ("rich/console.py:Console.export_html",),
        ),
        (
            "where is a python object pretty printed to a string with indentation?",
            ("rich/pretty.py:pretty_repr",),
        ),
        (
            "how is a traceback built from an exception type, value and traceback?",
            ("rich/traceback.py:Traceback.from_exception",),
        ),
        (
            "which function splits segments into lines at newline characters?",
            ("rich/segment.py:Segment.split_lines",),
        ),
        ("what adds a row of cells to a table?", ("rich/table.py:Table.add_row",)),
        (
            "what thread refreshes a live display at a fixed rate?",
            ("rich/live.py:_RefreshThread", "rich/live.py:_RefreshThread.run"),
        ),
        (
            "where are emoji codes like :smile: replaced by the emoji character?",
            ("rich/_emoji_replace.py:_emoji_replace",),
        ),
        (
            "how does a prompt turn the user's y or n answer into a boolean?",
            ("rich/prompt.py:Confirm.process_response",),
        ),
        (
            "which method draws a horizontal line with a title in the console?",
            ("rich/console.py:Console.rule",),
        ),
    ],
    "click": [
        (
            "where is the folder for an application's config files chosen on each platform?",
            ("src/click/utils.py:get_app_dir",),
        ),
        (
            "how are long help texts wrapped into paragraphs?",
            ("src/click/formatting.py:wrap_text",),
        ),
        (
            "what prints a message and strips ANSI styles when the output is not a terminal?",
            ("src/click/utils.py:echo",),
        ),
        (
            "how does the test runner invoke a command and capture its output and exit code?",
            ("src/click/testing.py:CliRunner.invoke",),
        ),
        ("which function asks the user a yes or no question?", ("src/click/termui.py:confirm",)),
        (
            "how is a value converted to a file system path and checked that it exists?",
            ("src/click/types.py:Path.convert",),
        ),
        (
            "where is the usage line of a command written into the help page?",
            ("src/click/formatting.py:HelpFormatter.write_usage",),
        ),
        (
            "how does the parser suggest the closest option name for an unknown long option?",
            ("src/click/parser.py:OptionParser._match_long_opt",),
        ),
        (
            "what opens a file lazily so that it is created only when first written?",
            ("src/click/utils.py:LazyFile", "src/click/utils.py:LazyFile.open"),
        ),
        (
            "where is an option's default read from an environment variable?",
            (
                "src/click/core.py:Parameter.resolve_envvar_value",
                "src/click/core.py:Option.resolve_envvar_value",
            ),
        ),
        (
            "how is the shell completion script generated?",
            ("src/click/shell_completion.py:ShellComplete.source",),
        ),
        (
            "how does a group find the subcommand to run from its name?",
            ("src/click/core.py:MultiCommand.resolve_command",),
        ),
        (
            "what launches the user's text editor to edit a message?",
            ("src/click/termui.py:edit", "src/click/_termui_impl.py:Editor.edit"),
        ),
        (
            "how is a choice validated against the allowed values, ignoring case if asked?",
            ("src/click/types.py:Choice.convert",),
        ),
        ("where is the terminal screen cleared?", ("src/click/termui.py:clear",)),
        (
            "how does the program wait until the user presses any key?",
            ("src/click/termui.py:pause",),
        ),
        (
            "how are numbers checked against a minimum and maximum, or clamped into the range?",
            ("src/click/types.py:_NumberRangeBase.convert",),
        ),
        (
            "what decorator passes the current context object to the callback?",
            ("src/click/decorators.py:pass_context",),
        ),
        (
            "which decorator adds a --version option that prints the program's version?",
            ("src/click/decorators.py:version_option",),
        ),
        (
            "how is the progress bar line drawn with its percentage and eta?",
            (
                "src/click/_termui_impl.py:ProgressBar.render_progress",
                "src/click/_termui_impl.py:ProgressBar.format_progress_line",
            ),
        ),
    ],
}


def _first(answer: str) -> str:
    """``file:symbol`` of the first answer (``file:1-9 · name`` on its first line)."""
    line = answer.splitlines()[0] if answer else ""
    if " · " not in line:
        return ""
    where, _, name = line.partition(" · ")
    return f"{where.rsplit(':', 1)[0]}:{name.split(' (', 1)[0].strip()}"


def _listed(answer: str) -> list[str]:
    """``file:symbol`` of the other candidates (``- file · symbol`` lines)."""
    out = []
    for line in answer.splitlines():
        if line.startswith("- ") and " · " in line:
            where, _, name = line[2:].partition(" · ")
            out.append(f"{where}:{name}")
    return out


def _module(path: str) -> str:
    stem = path.rsplit(".", 1)[0]
    return stem.removeprefix("src/").replace("/", ".")


def _quality(index: ProjectIndex, name: str) -> dict[str, Any]:
    named, rows = [], []
    for expected in NAMED[name]:
        path, symbol = expected.split(":")
        # A bare lower-case word in a sentence is a word; written as a call, it is a name.
        written = symbol if "." in symbol or "_" in symbol else f"{symbol}()"
        for asked in (symbol, f"where is {written} defined?", f"{_module(path)}.{symbol}"):
            first = _first(index.find(asked))
            named.append({"asked": asked, "expected": expected, "first": first})
    times = []
    for question, expected_any in BEHAVIOUR[name]:
        started = time.perf_counter()
        answer = index.find(question)
        times.append((time.perf_counter() - started) * 1000)
        first = _first(answer)
        rows.append(
            {
                "question": question,
                "expected": list(expected_any),
                "first": first,
                "hit1": first in expected_any,
                "listed": first in expected_any or bool(set(_listed(answer)) & set(expected_any)),
            }
        )
    return {
        "named_hits": sum(r["first"] == r["expected"] for r in named) / len(named),
        "named_misses": [r for r in named if r["first"] != r["expected"]],
        "behaviour_hits_at_1": sum(r["hit1"] for r in rows) / len(rows),
        "behaviour_hits_listed": sum(r["listed"] for r in rows) / len(rows),
        "find_ms_p50": round(statistics.median(times), 1),
        "behaviour": rows,
    }


def _speed(folder: Path, work: Path, runs: int, probe: str) -> dict[str, Any]:
    """First map into an empty index, find_code right after it, a map with nothing
    changed, and edit -> fresh."""
    first, idle, fresh, first_cpu, fresh_cpu = [], [], [], [], []
    first_sys, fresh_sys = [], []
    then, then_cpu = [], []
    for run in range(runs):
        base = work / f"index-{run}"
        started, cpu, kernel = time.perf_counter(), time.process_time(), os.times().system
        index = ProjectIndex(folder, base)
        head = index.map()
        first.append(time.perf_counter() - started)
        first_cpu.append(time.process_time() - cpu)
        first_sys.append(os.times().system - kernel)
        # find_code at once: it waits for whatever the first map left to write (a map
        # answers from its manifest and may write the store behind it). This process's
        # CPU time counts every thread, so the two CPU figures add up to all the work.
        started, cpu = time.perf_counter(), time.process_time()
        assert index.find(probe).startswith(NAMED_FILE[probe]), probe
        then.append(time.perf_counter() - started)
        then_cpu.append(time.process_time() - cpu)
        # A file the index holds (a version may leave some out), mid-sized, .py, not a
        # test (find_code's default scope leaves tests out).
        listed = [line.split(" · ")[0] for line in index.map(budget=10**9).splitlines()[1:]]
        sources = [
            folder / rel
            for rel in listed
            if rel.endswith(".py")
            and "test" not in rel
            and 2000 < (folder / rel).stat().st_size < 60_000
        ]
        started = time.perf_counter()
        index.map()
        idle.append(time.perf_counter() - started)
        path = sources[(run * 7) % len(sources)]
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef bench_added_{run}(value):\n    return value * {run}\n")
        started, cpu, kernel = time.perf_counter(), time.process_time(), os.times().system
        answer = index.find(f"bench_added_{run}")
        fresh.append(time.perf_counter() - started)
        fresh_cpu.append(time.process_time() - cpu)
        fresh_sys.append(os.times().system - kernel)
        assert f"return value * {run}" in answer, answer
        # Kept until the codebase's folder goes: on a file system without a journal (this
        # machine's ext4), creating a file steps over every inode deleted in the last
        # seconds to minutes, so deleting an index just before the next first map slowed
        # that map down (the kernel's ``recently_deleted``, up to 40 % of its samples).
        index.close()
    return {
        "files": int(head.split(" · ")[2].split()[0]),
        "first_map_s": round(statistics.median(first), 2),
        "first_map_s_all": [round(x, 2) for x in first],
        "first_map_cpu_s": round(statistics.median(first_cpu), 2),
        "first_map_cpu_s_all": [round(x, 2) for x in first_cpu],
        "first_map_sys_s": round(statistics.median(first_sys), 2),
        "then_find_s": round(statistics.median(then), 3),
        "then_find_s_all": [round(x, 3) for x in then],
        "then_find_cpu_s": round(statistics.median(then_cpu), 3),
        "first_map_and_find_s": round(
            statistics.median(a + b for a, b in zip(first, then, strict=True)), 2
        ),
        "no_change_map_ms": round(statistics.median(idle) * 1000, 1),
        "edit_fresh_s": round(statistics.median(fresh), 3),
        "edit_fresh_s_all": [round(x, 3) for x in fresh],
        "edit_fresh_cpu_s": round(statistics.median(fresh_cpu), 3),
        "edit_fresh_cpu_s_all": [round(x, 3) for x in fresh_cpu],
        "edit_fresh_sys_s": round(statistics.median(fresh_sys), 3),
    }


def run_codebase(codebase: Codebase, runs: int, meaning: bool) -> dict[str, Any]:
    root = source(codebase)
    with tempfile.TemporaryDirectory(prefix="ihmt-bench-code-") as tmp:
        folder = Path(tmp) / codebase.label
        shutil.copytree(root, folder)
        ProjectIndex(folder, Path(tmp) / "warm").map()  # imports and plugins loaded once
        index = ProjectIndex(folder, Path(tmp) / "words")
        result: dict[str, Any] = {"codebase": codebase.label}
        result["words"] = _quality(index, codebase.name)
        index.close()
        if meaning:
            from ihmt_navigator import load_embedder

            embedder = load_embedder("on")[0]
            if embedder is None:
                raise SystemExit("--meaning: the [semantic] extra is not installed")
            index = ProjectIndex(folder, Path(tmp) / "meaning", embedder=embedder)
            result["meaning"] = _quality(index, codebase.name)
            index.close()
        if runs:
            probe = NAMED[codebase.name][0].split(":")[1]
            result["speed"] = _speed(folder, Path(tmp), runs, probe)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codebases", nargs="+", default=list(CODEBASES), choices=CODEBASES)
    parser.add_argument("--runs", type=int, default=5, help="speed runs (0: answers only)")
    parser.add_argument("--meaning", action="store_true", help="also re-rank by meaning")
    parser.add_argument("--label", default="", help="names this run in the JSON")
    parser.add_argument("--out", type=Path, default=RESULTS / "find_code.json")
    args = parser.parse_args(argv)
    results = [run_codebase(CODEBASES[n], args.runs, args.meaning) for n in args.codebases]
    print("| codebase | files | named first | behaviour first | behaviour listed | first map "
          "(CPU) | then find_code (CPU) | no change | edit → fresh (CPU) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    nan = float("nan")
    for r in results:
        w, s = r["words"], r.get("speed", {})
        print(
            f"| {r['codebase']} | {s.get('files', '–')} | {w['named_hits']:.2f} | "
            f"{w['behaviour_hits_at_1']:.2f} | {w['behaviour_hits_listed']:.2f} | "
            f"{s.get('first_map_s', nan):.2f} s ({s.get('first_map_cpu_s', nan):.2f}) | "
            f"{s.get('then_find_s', nan):.3f} s ({s.get('then_find_cpu_s', nan):.3f}) | "
            f"{s.get('no_change_map_ms', nan):.0f} ms | "
            f"{s.get('edit_fresh_s', nan):.3f} s ({s.get('edit_fresh_cpu_s', nan):.3f}) |"
        )
        if "meaning" in r:
            m = r["meaning"]
            print(f"|   with meaning | | {m['named_hits']:.2f} | {m['behaviour_hits_at_1']:.2f} "
                  f"| {m['behaviour_hits_listed']:.2f} | | | | |")  # fmt: skip
    for r in results:
        for miss in r["words"]["named_misses"]:
            print(f"  {r['codebase']} named {miss['asked']!r}: {miss['first'] or 'NOT FOUND'}")
        for row in r["words"]["behaviour"]:
            if not row["hit1"]:
                print(f"  {r['codebase']} {row['expected'][0]:<48} got {row['first']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"bench": "find_code", "label": args.label, "runs": args.runs, "results": results}
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
