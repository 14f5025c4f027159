"""The untested-release gate of `tilelens-lsp check` (TL040, exit 2).

The installed release is made "untested" by running the CLI in a subprocess whose
`tilelens_lsp.releases.TESTED_RELEASES` is emptied before `cli.main` runs. The CLI checks the release
the worker reports with `releases.is_tested` in the parent process, so patching the parent is enough.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE = REPO_ROOT / "samples" / "vector_add.py"

_UNTESTED = (
    "import sys\n"
    "import tilelens_lsp.releases as releases\n"
    "releases.TESTED_RELEASES = ()\n"
    "from tilelens_lsp.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _check(*args: str, allow: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TILELENS_IR_ALLOW_UNTESTED_TRITON"}
    if allow is not None:
        env["TILELENS_IR_ALLOW_UNTESTED_TRITON"] = allow
    return subprocess.run(
        [sys.executable, "-c", _UNTESTED, "check", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=300,
    )


def _installed() -> str:
    import triton

    return triton.__version__


def test_untested_release_is_refused_with_tl040_and_exit_2():
    proc = _check(str(SAMPLE))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "[TL040]" in line]
    assert len(lines) == 1, proc.stdout
    assert f"Triton {_installed()} is not a tested release" in lines[0]
    assert "TILELENS_IR_ALLOW_UNTESTED_TRITON=1" in lines[0]
    assert "warning" in lines[0]
    assert "TL001" not in proc.stdout and "TL003" not in proc.stdout  # nothing was analysed


def test_untested_release_refusal_in_json():
    proc = _check(str(SAMPLE), "--format", "json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["triton"] == _installed()
    codes = [d["code"] for f in doc["files"] for d in f.get("diagnostics", [])]
    assert codes == ["TL040"], doc
    assert not any(f.get("launches") for f in doc["files"])


def test_untested_release_runs_when_allowed():
    proc = _check(str(SAMPLE), "--format", "json", allow="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    codes = [d["code"] for f in doc["files"] for d in f.get("diagnostics", [])]
    assert "TL040" not in codes
    launches = [launch for f in doc["files"] for launch in f["launches"]]
    assert launches and all(launch["status"] == "analyzed" for launch in launches)


def test_allow_variable_set_to_zero_does_not_open_the_gate():
    proc = _check(str(SAMPLE), allow="0")
    assert proc.returncode == 2
    assert "[TL040]" in proc.stdout


def test_tested_release_passes_the_gate():
    """Without the patch the installed (tested) release is analysed: no TL040."""
    from tilelens_lsp import releases

    if not releases.is_tested(_installed()):
        import pytest

        pytest.skip(f"Triton {_installed()} is itself untested")
    env = {k: v for k, v in os.environ.items() if k != "TILELENS_IR_ALLOW_UNTESTED_TRITON"}
    proc = subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", str(SAMPLE)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "TL040" not in proc.stdout


def test_the_one_gate_refuses_only_untested_releases_unless_allowed(monkeypatch):
    from tilelens_lsp import releases

    monkeypatch.delenv(releases.ALLOW_ENV, raising=False)
    assert [releases.gate(v) for v in ("3.6.0", "3.9.1+git1234", "3.8")] == [None, None, None]
    refused = releases.gate("3.10.0")
    assert (refused.code, refused.severity, refused.line) == ("TL040", "warning", 1)
    assert "3.10.0" in refused.message and releases.ALLOW_ENV in refused.message
    monkeypatch.setenv(releases.ALLOW_ENV, "1")
    assert releases.gate("3.10.0") is None
