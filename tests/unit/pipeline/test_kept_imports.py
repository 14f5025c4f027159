"""A warm worker's re-analysis of a changed file runs only that file again: its unchanged helper
modules are kept (issue 28), and never one that changed or that something changed behind it.

Each helper appends to a log file outside the workspace when it is executed: the log, not our own
bookkeeping, says how often it ran. The verdict is the second oracle: a stale helper would show as
the old verdict (a store at `offs + SHIFT` into 64 elements is out of bounds iff SHIFT > 0).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tilelens_lsp.pipeline import Imports, WarmState, analyze_path
from tilelens_lsp.pipeline.reuse import imports_module


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


KERNEL = src("""
    import triton
    import triton.language as tl
    import helpers
    {extra}
    # tilelens: k[(1,)](fp32[64])
    @triton.jit
    def k(x_ptr):
        offs = tl.arange(0, 64)
        tl.store(x_ptr + offs + helpers.SHIFT, 1.0)
""")

HELPER = src("""
    import os
    with open(os.environ["TILELENS_TEST_HELPER_LOG"], "a") as log:
        log.write("x")
    {body}
""")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv("TILELENS_TEST_HELPER_LOG", str(tmp_path / "helper.log"))
    root = tmp_path / "ws"
    root.mkdir()
    return root


def runs(ws: Path) -> int:
    log = ws.parent / "helper.log"
    return len(log.read_text()) if log.exists() else 0


def codes(ws: Path, state: WarmState) -> list[str]:
    return sorted(d.code for d in analyze_path(ws / "kern.py", ws, state=state).all_diagnostics())


def write(ws: Path, kernel_extra: str = "", helper_body: str = "SHIFT = 0", comment: str = "") -> None:
    (ws / "kern.py").write_text(KERNEL.format(extra=kernel_extra) + comment)
    (ws / "helpers.py").write_text(HELPER.format(body=helper_body))


def warm() -> WarmState:
    return WarmState(imports=Imports(reuse=True))


def test_an_unchanged_helper_is_not_executed_again_and_a_changed_one_is(ws: Path):
    state = warm()
    write(ws)
    assert codes(ws, state) == [] and runs(ws) == 1
    for i in range(3):  # the kernel's file changes (a comment): the helper is kept
        (ws / "kern.py").write_text(KERNEL.format(extra="") + f"# edit {i}\n")
        assert codes(ws, state) == [] and runs(ws) == 1
    (ws / "helpers.py").write_text(HELPER.format(body="SHIFT = 1"))  # the helper itself changes
    assert codes(ws, state) == ["TL001"] and runs(ws) == 2
    (ws / "kern.py").write_text(KERNEL.format(extra="") + "# edit again\n")
    assert codes(ws, state) == ["TL001"] and runs(ws) == 2  # kept again, the new one


def test_without_reuse_every_analysis_executes_the_helper(ws: Path):
    state = WarmState()
    write(ws)
    for i in range(3):
        (ws / "kern.py").write_text(KERNEL.format(extra="") + f"# edit {i}\n")
        assert codes(ws, state) == []
    assert runs(ws) == 3


def test_a_helper_the_kernel_module_changed_is_never_kept(ws: Path):
    state = warm()
    write(ws, kernel_extra="helpers.SHIFT = 1")
    assert codes(ws, state) == ["TL001"]
    # the assignment is gone: a kept helper would still say SHIFT = 1, a false TL001
    (ws / "kern.py").write_text(KERNEL.format(extra=""))
    assert codes(ws, state) == [] and runs(ws) == 2


def test_a_file_the_helper_read_at_import_is_watched(ws: Path):
    state = warm()
    (ws / "shift.txt").write_text("0")
    body = "SHIFT = int(open(os.path.join(os.path.dirname(__file__), 'shift.txt')).read())"
    write(ws, helper_body=body)
    assert codes(ws, state) == [] and runs(ws) == 1
    (ws / "kern.py").write_text(KERNEL.format(extra="") + "# edit\n")
    assert codes(ws, state) == [] and runs(ws) == 1
    (ws / "shift.txt").write_text("1")
    (ws / "kern.py").write_text(KERNEL.format(extra="") + "# edit 2\n")
    assert codes(ws, state) == ["TL001"] and runs(ws) == 2


def test_another_file_forgets_the_kept_helpers(ws: Path):
    state = warm()
    write(ws)
    assert codes(ws, state) == [] and runs(ws) == 1
    other = ws / "other"
    other.mkdir()
    (other / "kern.py").write_text(KERNEL.format(extra=""))
    (other / "helpers.py").write_text(HELPER.format(body="SHIFT = 1"))  # a same-named helper elsewhere
    assert sorted(d.code for d in analyze_path(other / "kern.py", other, state=state).all_diagnostics()) == ["TL001"]
    (ws / "kern.py").write_text(KERNEL.format(extra="") + "# back\n")
    assert codes(ws, state) == [] and runs(ws) == 3


def test_a_helper_that_imports_the_kernel_file_under_its_own_name_is_never_kept(ws: Path):
    state = warm()
    kernel = KERNEL.replace("import helpers\n", "OFFSET = {offset}\nimport helpers\n")
    (ws / "helpers.py").write_text(HELPER.format(body="import kern\nSHIFT = kern.OFFSET"))
    (ws / "kern.py").write_text(kernel.format(extra="", offset=0))
    assert codes(ws, state) == []
    (ws / "kern.py").write_text(kernel.format(extra="", offset=1))  # a kept helper would still read 0
    assert codes(ws, state) == ["TL001"]


@pytest.mark.parametrize(
    "source, package, imports",
    [
        ("import pkg.kern\n", "pkg", True),
        ("from . import kern\n", "pkg", True),
        ("from .kern import k\n", "pkg", True),
        ("from pkg import *\n", "pkg", True),
        ("import importlib\nm = importlib.import_module('x')\n", "pkg", True),
        ("from . import other\nimport os\n", "pkg", False),
        ("import kernels\n", "pkg", False),
    ],
)
def test_a_helper_that_may_import_the_kernel_module_is_recognised(source: str, package: str, imports: bool):
    assert imports_module(source, package, "pkg.kern") is imports
