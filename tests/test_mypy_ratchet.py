"""tools/mypy_ratchet.py reads mypy's summary line right and fails only when the count rises (mypy itself
runs in .ci/run, not here: a cold run takes a minute)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("mypy_ratchet", ROOT / "tools" / "mypy_ratchet.py")
ratchet = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ratchet)


def test_counts_from_mypys_summary_line():
    assert ratchet.count_errors("a.py:1: error: x  [misc]\nFound 12 errors in 3 files (checked 91 source files)\n") == 12
    assert ratchet.count_errors("Found 1 error in 1 file (checked 2 source files)\n") == 1
    assert ratchet.count_errors("Success: no issues found in 91 source files\n") == 0
    with pytest.raises(RuntimeError):
        ratchet.count_errors("mypy: can't read file 'tilelens_lsp': No such file or directory\n")


@pytest.mark.parametrize(("found", "baseline", "code"), [(5, 5, 0), (4, 5, 0), (6, 5, 1)])
def test_fails_only_when_the_count_rises(monkeypatch, tmp_path, capsys, found, baseline, code):
    out = f"Found {found} errors in 2 files (checked 9 source files)\n"
    monkeypatch.setattr(ratchet.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, out, ""))
    monkeypatch.setattr(ratchet, "BASELINE", tmp_path / "baseline.txt")
    ratchet.BASELINE.write_text(f"{baseline}\n")
    assert ratchet.main([]) == code
    assert f"mypy: {found} errors in tilelens_lsp (baseline {baseline})" in capsys.readouterr().out
    assert ratchet.main(["--update"]) == code
    assert ratchet.BASELINE.read_text() == f"{min(found, baseline)}\n"  # lowered, never raised


def test_the_baseline_is_a_count():
    assert int((ROOT / "tools" / "mypy_baseline.txt").read_text().split()[0]) >= 0
