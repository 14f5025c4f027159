"""`tilelens-lsp capture` under hostile or careless use (issue 24, items 3 and 7-13).

The programs run under Triton's interpreter (TRITON_INTERPRET=1) on numpy-backed tensors
(capture_prog.py), as a user's test suite would on a GPU. The writer's tests call the runner's
functions directly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import relfig
from lsp.lsphelp import REPO

HERE = Path(__file__).resolve().parent
TIMEOUT = 300   # a safety limit for one subprocess, never an assertion about speed


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TRITON_INTERPRET")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(HERE), os.environ.get("PYTHONPATH")]))
    base["TILELENS_CACHE_DIR"] = "off"
    base.update(extra)
    return base


def capture(folder: Path, program: str, *extra: str, out: str = "tilelens.toml") -> subprocess.CompletedProcess:
    (folder / "prog.py").write_text(textwrap.dedent(program).lstrip("\n"))
    return subprocess.run([sys.executable, "-m", "tilelens_lsp", "capture", "--out", str(folder / out), *extra,
                           "--", sys.executable, str(folder / "prog.py")],
                          capture_output=True, text=True, cwd=folder, timeout=TIMEOUT, env=env())


def check(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilelens_lsp", "check", *args], capture_output=True, text=True,
                          cwd=folder, timeout=TIMEOUT, env=env())


# ---------------------------------------------------------------- 3. which kernel was launched

SHADOWED = """
    from capture_prog import Tensor, triton, tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):          # the module's kernel: masked, clean
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)

    def test_local():
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):      # a test's own kernel of the same name: writes past n
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 1.0)
        k[(1,)](Tensor("fp32", 100), 100, BLOCK=128)

    test_local()
    k[(1,)](Tensor("fp32", 100), 100, BLOCK=128)
"""


def test_a_local_kernel_is_never_recorded_as_the_modules_kernel_of_the_same_name(tmp_path):
    run = capture(tmp_path, SHADOWED)
    assert run.returncode == 0, run.stderr
    tables = tomllib.loads((tmp_path / "tilelens.toml").read_text())["launch"]
    # only the module's own launch is written; the local kernel's is named as not recorded, and why
    assert [t["launch"] for t in tables] == ["k[(1,)](fp32[100], 100, BLOCK=128)"], tables
    assert "not recorded" in run.stderr and "test_local" in run.stderr, run.stderr
    relfig.bump("capture", "tested")
