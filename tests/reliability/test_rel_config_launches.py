"""A launch given by `--config` is checked or reported, never dropped: the false clean of a toml launch
that names nothing the worker can import, and of the capture that wrote one for the user's own file.

Before: `check --config sub/x.toml` with an unresolvable `module =` launch dropped it without a word,
walked the current folder instead and exited 0 on a clean neighbour; `capture --out sub/x.toml` wrote
`module = "fixture_kernels"` for the user's uninstalled file, which fed straight into that.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
CAPTURE = TESTS / "capture"
SAMPLES = TESTS.parent / "samples"

BUGGY = """import triton
import triton.language as tl


@triton.jit
def tail_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0)
"""


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_an_unresolvable_config_launch_is_a_tl010_and_exit_2_not_a_clean_neighbour(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "mykernels").mkdir()
    (tmp_path / "mykernels" / "__init__.py").write_text("")
    (tmp_path / "mykernels" / "tail.py").write_text(BUGGY)
    shutil.copy(SAMPLES / "vector_add.py", tmp_path / "clean_neighbour.py")  # clean: exit 0 if it were checked
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.toml").write_text(
        '[[launch]]\nmodule = "mykernels.tail"\nlaunch = "tail_kernel[(8,)](fp32[1000], BLOCK=128)"\n'
    )
    run = _run("check", "--config", "sub/x.toml", cwd=tmp_path)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stdout.startswith("sub/x.toml:2:1: error: this launch is not checked") and "[TL010]" in run.stdout
    assert "clean_neighbour" not in run.stdout + run.stderr


def test_capture_into_a_subfolder_writes_file_for_the_workspace_kernel_and_check_finds_its_bug(tmp_path):
    (tmp_path / ".git").mkdir()
    for name in ("fixture_kernels.py", "fixture_run.py"):
        shutil.copy(CAPTURE / name, tmp_path / name)
    (tmp_path / "sub").mkdir()
    run = _run("capture", "--out", "sub/x.toml", "--", sys.executable, "fixture_run.py", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    tables = tomllib.loads((tmp_path / "sub" / "x.toml").read_text())["launch"]
    assert {t.get("file") for t in tables} == {"../fixture_kernels.py"} and not any("module" in t for t in tables)
    checked = _run("check", "--config", "sub/x.toml", "--format", "json", cwd=tmp_path)
    assert checked.returncode in (0, 1), checked.stderr
    doc = json.loads(checked.stdout)
    assert [f["path"] for f in doc["files"]] == ["fixture_kernels.py"]
    assert {launch["origin"]["path"] for launch in doc["files"][0]["launches"]} == {"sub/x.toml"}
    assert doc["summary"]["analyzed"] == doc["summary"]["launches"] >= 3  # every captured launch checked
