"""The grid engine reads declared value ranges as the launch model holds them: a sorted set of
[LO, HI) intervals (unions since the data branch). It indexed them as one (LO, HI) pair and failed on
every ranged launch it answered (vLLM's fused_moe_kernel at 100,000 tokens x top-k 6: TL050
IndexError); a union is bounded by its hull."""

from __future__ import annotations

import pytest

from tilelens_lsp.pipeline import analyze_path

KERNEL = """import triton
import triton.language as tl


# tilelens: gather[(2 ** 18,)](i32[2 ** 18 * 4].values([(0, 100), -1]), fp32[100], fp32[2 ** 18 * 4])
@triton.jit
def gather(idx, tab, out):
    offs = tl.program_id(0) * 4 + tl.arange(0, 4)
    i = tl.load(idx + offs)
    tl.store(out + offs, tl.load(tab + i, mask=i >= 0))
"""


@pytest.fixture(autouse=True)
def _grid(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv("TILELENS_ENGINE", "grid")


def test_a_ranged_union_is_read_by_the_grid_engine(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    (launch,) = analyze_path(path, tmp_path).launches
    assert launch.engine == "grid"
    assert launch.status == "analyzed"
    assert not [d for d in launch.diagnostics if d.code == "TL050"]
    # the hull [-1, 100) leaves the table below: a bound, never a definite verdict
    assert {d.code for d in launch.diagnostics} <= {"TL002"}


LANES = """import triton
import triton.language as tl


# tilelens: pairs[(2 ** 18,)](fp32[2 ** 18 * 2])
@triton.jit
def pairs(out):
    offs = tl.program_id(0) * 2 + tl.arange(0, 4) // 2
    tl.store(out + offs, tl.arange(0, 4).to(tl.float32))


# tilelens: rows[(2 ** 18,)](fp32[2 ** 18 * 4])
@triton.jit
def rows(out):
    offs = tl.program_id(0) * 4 + tl.arange(0, 4)
    tl.store(out + offs, tl.arange(0, 4).to(tl.float32))
"""


def test_lanes_that_may_meet_are_named_in_a_note_never_left_silent(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(LANES)
    by_kernel = {launch.kernel: launch for launch in analyze_path(path, tmp_path).launches}
    assert by_kernel["pairs"].engine == "grid"
    # lanes 0 and 1 store one element: the grid engine cannot rule it out, so a note says races were
    # not checked there; distinct lanes of a row get no such note
    assert any("races" in n and "not checked" in n for n in by_kernel["pairs"].notes)
    assert not any("not checked" in n for n in by_kernel["rows"].notes)
