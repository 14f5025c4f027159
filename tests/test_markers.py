"""The markers of the fast subset: registered, applied by folder, and `-m "not slow and not corpus"`
leaves out exactly the slow and corpus tests."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# by path: several folders have a conftest.py, so `import conftest` may find another one
_spec = importlib.util.spec_from_file_location("tilelens_tests_conftest", ROOT / "tests" / "conftest.py")
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


def test_markers_are_registered_and_their_folders_exist():
    registered = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0] for m in registered} == {"slow", "corpus", "gpu"}
    assert all((ROOT / "tests" / s).is_dir() for s in conftest.SLOW_SUITES + conftest.CORPUS_SUITES)


@pytest.mark.slow  # a second pytest collecting in a subprocess
def test_the_fast_subset_leaves_out_slow_and_corpus_tests():
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow and not corpus",
            "tests/lsp/test_runs.py",
            "tests/corpus",
            "tests/unit/engines/test_ranges.py",
            "tests/test_paths.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    selected = [line for line in run.stdout.splitlines() if "::" in line]
    fast = ("tests/unit/engines/test_ranges.py", "tests/test_paths.py")
    assert selected and all(line.startswith(fast) for line in selected)
    assert not any("test_interval_arithmetic_covers_every_value" in line for line in selected)  # marked slow
    assert "deselected" in run.stdout
