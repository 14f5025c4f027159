"""A declared value range describes the data a launch is given, not what the kernel itself writes
there. A kernel that stores to a ranged tensor and loads it back must never be analysed with the
declared range: the red-team reproduction stored `v + 50` into an index declared `.values(0, 100)`,
reloaded it and gathered past a 100-element table (the interpreter read element 149), and the launch
came back clean."""

from __future__ import annotations

import pytest

from tilelens_lsp.pipeline import analyze_path

KERNEL = """import triton
import triton.language as tl


# tilelens: reload[(1,)](i32[1].values(0, 100), fp32[100], fp32[1])
@triton.jit
def reload(idx, tab, out):
    v = tl.load(idx)
    tl.store(idx, v + 50)
    w = tl.load(idx)
    tl.store(out, tl.load(tab + w))


# tilelens: gather[(1,)](i32[4].values(0, 100), fp32[100], fp32[4])
@triton.jit
def gather(idx, tab, out):
    offs = tl.arange(0, 4)
    tl.store(out + offs, tl.load(tab + tl.load(idx + offs)))
"""


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")


def test_a_ranged_tensor_the_kernel_rewrites_is_never_clean(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    by_kernel = {launch.kernel: launch for launch in analyze_path(path, tmp_path).launches}
    reload = by_kernel["reload"]
    assert reload.status == "refused"
    assert [d.kind for d in reload.diagnostics if d.code == "TL030"] == ["ranged-tensor-written"]


def test_a_ranged_tensor_only_read_keeps_its_range(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    gather = {launch.kernel: launch for launch in analyze_path(path, tmp_path).launches}["gather"]
    assert gather.status == "analyzed" and not gather.diagnostics
