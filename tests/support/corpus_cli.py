"""`tilelens-lsp check` run as a user runs it on installed packages (tests/corpus/): the CLI in a
subprocess of this interpreter, its worker under another venv's Python (the corpus venv, the inference
venv) where the packages are installed, the JSON report read back.

It only runs the command and decodes the report; which verdicts a test expects is the test's. The
venvs are made by tools/corpus_env.sh and tools/infer_env.sh; a test that needs one skips without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS_VENV = Path(os.environ.get("TILELENS_CORPUS_VENV", REPO / ".venv-corpus"))

needs_corpus_venv = pytest.mark.skipif(
    not (CORPUS_VENV / "bin" / "python").exists(),
    reason=f"the corpus venv {CORPUS_VENV} is absent: create it with `bash tools/corpus_env.sh`",
)


def run_check(
    config: Path, cwd: Path, *, python: Path | None = None, timeout: int = 300, cache: bool = True
) -> subprocess.CompletedProcess[str]:
    """`tilelens-lsp check --config CONFIG --format json --timeout TIMEOUT` (with `--python PYTHON`
    when given) in `cwd`; `cache=False` turns the result cache off (`TILELENS_CACHE_DIR=off`)."""
    args = ["--config", str(config)] + (["--python", str(python)] if python is not None else [])
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", *args, "--format", "json", "--timeout", str(timeout)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
        env=None if cache else {**os.environ, "TILELENS_CACHE_DIR": "off"},
    )


def check_json(
    config: Path, cwd: Path, *, python: Path | None = None, timeout: int = 300, cache: bool = True
) -> dict[str, Any]:
    """The JSON report of `run_check`, which must have exited 0 (clean) or 1 (findings)."""
    proc = run_check(config, cwd, python=python, timeout=timeout, cache=cache)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(proc.stdout)
