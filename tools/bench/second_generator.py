"""An independent generator of dated notes, scored in process: the same steps as its own
command-line scorer, in minutes instead of an hour.

    python tools/bench/second_generator.py --sizes 500                  # one save per entry
    python tools/bench/second_generator.py --sizes 5000 --mode journal  # `ihmt ingest` of a journal
    python tools/bench/second_generator.py --harness DIR --show-failures 30

The generator and its scorer are kept outside the repository (``--harness``: the folder
holding its ``evalharness`` package; by default ``shared/eval`` beside the clone). They were
written apart from ``_memories.py``, so the two together tell an assumption of one from a
property of the memory. Their scorer drives the ``ihmt`` command, one process per save and
question; this runs the very same commands through ``ihmt_cli.main`` in this process (the
same parsing, the same output, the same ``--json``), so only the start-up of a process per
call is saved. The figures are the scorer's own: R@1, updates, ambiguity, abstention, false
abstention, tokens.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HARNESS = HERE.parents[2] / "shared" / "eval"


def _adapter_class(harness: Path) -> Any:
    """The harness's command-line adapter, with its one process-per-call step done in process."""
    sys.path.insert(0, str(harness))
    from evalharness.adapters import AdapterError, IhmtCli  # type: ignore[import-not-found]

    from ihmt_cli import main as ihmt_main

    class InProcess(IhmtCli):  # type: ignore[misc]
        name = "ihmt_cli"

        def _run(self, args: list[str], what: str) -> subprocess.CompletedProcess[str]:
            assert self.store is not None
            full = ["--path", str(self.store), *args]
            out, err = io.StringIO(), io.StringIO()
            here = os.getcwd()
            try:
                if self.cwd:
                    os.chdir(self.cwd)
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = ihmt_main(full)
            finally:
                os.chdir(here)
            if code != 0:
                raise AdapterError(f"ihmt: `{what}` exited {code}: {err.getvalue()[-600:]}")
            return subprocess.CompletedProcess(full, code, out.getvalue(), err.getvalue())

    return InProcess


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--harness", type=Path, default=HARNESS)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500])
    parser.add_argument("--mode", choices=["save", "journal"], default="save")
    parser.add_argument("--limit", type=int, default=300, help="questions per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--out", type=Path, help="the full results as JSON")
    parser.add_argument("--show-failures", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    if not (args.harness / "evalharness").is_dir():
        print(f"no generator at {args.harness}: give its folder with --harness", file=sys.stderr)
        return 2
    adapter_class = _adapter_class(args.harness)
    from evalharness.scale import render_scale, run_scale

    work = Path(tempfile.mkdtemp(prefix="ihmt-second-"))
    cwd = work / "cwd"
    cwd.mkdir()
    adapter = adapter_class({"cwd": str(cwd)})
    options = argparse.Namespace(
        sizes=args.sizes,
        seed=args.seed,
        limit=args.limit,
        top_k=args.top_k,
        branch_factor=None,
        scale_ingest=args.mode,
        save_max=10**9,
        no_domains=False,
        progress=True,
        cold_samples=0,
    )
    try:
        result = run_scale(adapter, options, work / "ihmt")
        print()
        print(render_scale(result, "ihmt"))
        for size in result["per_size"]:
            bad = [
                r
                for r in size["per_query"]
                if r.get("r1") is False or r.get("detected") is False or r.get("abstained") is False
            ]
            shown = bad[: args.show_failures]
            if shown:
                n = size["summary"]["n"]
                print(f"\nn={n}: {len(bad)} not as expected; the first {len(shown)}:")
            for r in shown:
                keys = ("kind", "query", "status", "expect_num", "top1")
                print("-", json.dumps({k: r.get(k) for k in keys}, ensure_ascii=False)[:300])
        if args.out:
            args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str))
            print(f"wrote {args.out}")
    finally:
        adapter.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
