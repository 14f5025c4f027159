"""`tilelens-lsp capture`: launches recorded from a real run (here under TRITON_INTERPRET=1, on
numpy-backed tensors) check exactly like the hand-written directives of the same launches."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings

HERE = Path(__file__).resolve().parent
HAND_WRITTEN = """
# tilelens: row_copy_kernel[(4,)](tensor(fp32, (4, 48), strides=(64, 1), storage=256), fp32[4, 48], 64, 48, BLOCK=64)
# tilelens: scale_kernel[lambda meta: (cdiv(1000, meta["BLOCK"]),)](fp32[1000], 1000)
# tilelens: gather_kernel[(16,)](i32[16].values(0, 10), fp32[10, 32], fp32[16, 32], 2**33, D=32)
"""


def _capture(folder: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tilelens_lsp",
            "capture",
            "--out",
            str(folder / "tilelens.toml"),
            *extra,
            "--",
            sys.executable,
            str(folder / "fixture_run.py"),
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=300,
    )


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("capture")
    for name in ("fixture_kernels.py", "fixture_run.py"):
        shutil.copy(HERE / name, folder / name)
    run = _capture(folder)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "done"  # the program's own output passes through untouched
    assert "3 launch(es) recorded, 3 written" in run.stderr
    return folder


def _verdicts(result) -> list[tuple]:
    return sorted(
        (launch.kernel, d.code, d.line, d.column, repr(d.witness)) for launch in result.launches for d in launch.diagnostics
    )


def test_the_captured_launches_check_like_the_hand_written_ones(captured, tmp_path):
    tables = tomllib.loads((captured / "tilelens.toml").read_text())["launch"]
    launches = [t["launch"] for t in tables]
    assert any("tensor(fp32, (4, 48), strides=(64, 1), offset=0, storage=256)" in x for x in launches)  # the view
    assert any(x.startswith("scale_kernel[lambda meta:") for x in launches)  # autotuned: every config
    assert any("i32[16].values(0, 10)" in x and "8589934592" in x for x in launches)  # range, int64 scalar
    from_capture = analyze_path(
        captured / "fixture_kernels.py", captured, Settings(), config_file=captured / "tilelens.toml"
    )
    hand = tmp_path / "fixture_kernels.py"
    hand.write_text((HERE / "fixture_kernels.py").read_text() + HAND_WRITTEN)
    by_hand = analyze_path(hand, tmp_path, Settings())
    assert _verdicts(from_capture) == _verdicts(by_hand)
    codes = [c for _, c, *_ in _verdicts(from_capture)]
    assert codes.count("TL001") == 2 and "TL004" in codes  # both autotune configs read element 1000


def test_merging_a_second_capture_adds_no_duplicate(captured):
    before = (captured / "tilelens.toml").read_text()
    run = _capture(captured, "--merge")
    assert run.returncode == 0 and "0 written" in run.stderr
    assert (captured / "tilelens.toml").read_text() == before


def test_an_existing_file_is_never_overwritten_without_merge(captured):
    before = (captured / "tilelens.toml").read_text()
    run = _capture(captured)
    assert run.returncode == 2 and "--merge" in run.stderr
    assert (captured / "tilelens.toml").read_text() == before


def test_capturing_our_own_conformance_run_gives_launches_that_all_compile(tmp_path):
    """The repository's own interpreter suite (tools/conformance/run_oracle.py, every conformance kernel)
    launches kernels the way user code does; everything it launches is captured and checks without a
    compile or directive error."""
    repo = HERE.parents[1]
    out = tmp_path / "own.toml"
    kernels = sorted(str(p) for p in (repo / "tests" / "conformance" / "kernels").glob("*.py"))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tilelens_lsp",
            "capture",
            "--out",
            str(out),
            "--",
            sys.executable,
            str(repo / "tools" / "conformance" / "run_oracle.py"),
            "--no-cache",
            "-j",
            "1",
            *kernels,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tables = tomllib.loads(out.read_text())["launch"]
    assert len(tables) >= 150 and len({t["file"] for t in tables}) == len(kernels)
    check = subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", "--config", str(out), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    assert check.returncode in (0, 1), check.stderr[-3000:]
    files = json.loads(check.stdout)["files"]
    statuses = {launch["status"] for f in files for launch in f["launches"]}
    assert statuses <= {"analyzed", "refused"}, statuses
    assert [d for f in files for d in f.get("diagnostics", []) if d["code"] in ("TL010", "TL020", "TL050")] == []
