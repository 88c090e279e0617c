"""The secret benchmark runs as one command: every promised format refused, no harmless
sentence refused; and the same holds for corpora generated from other seeds."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("secret_formats", HERE / "secret_formats.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def test_secret_benchmark_prints_its_table_and_misses_nothing_promised(tmp_path: Path) -> None:
    out = tmp_path / "secrets.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "secret_formats.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "| secret formats |" in done.stdout and "| harmless sentences |" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["formats"] >= 60 and report["harmless"] >= 60
    assert report["promised_missed"] == [], report["missed"]
    assert report["false_refusals"] == [], report["false_refusals"]
    assert report["caught"] == report["formats"]
    assert report["prefilter_differs"] == [], report["prefilter_differs"]
    assert report["scan_ms_median"] > 0


def test_the_corpus_holds_distinct_formats_in_every_group() -> None:
    formats = BENCH.secret_formats(BENCH.Gen(27))
    names = [f.name for f in formats]
    assert len(names) == len(set(names))
    assert {f.group for f in formats} >= {"cloud", "code", "saas", "ai", "key", "url", "file"}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_every_format_is_refused_and_every_harmless_sentence_kept_for_any_seed(
    seed: int,
) -> None:
    g = BENCH.Gen(seed)
    missed = [
        f.name for f in BENCH.secret_formats(g) if f.promised and not BENCH.find_secrets(f.text)
    ]
    harmless = BENCH.harmless_sentences(g)
    refused = [t for t in harmless if BENCH.find_secrets(t)]
    assert missed == [] and refused == [], (missed, refused)
    texts = [f.text for f in BENCH.secret_formats(BENCH.Gen(seed))] + harmless
    assert BENCH.prefilter_differs(texts) == []
