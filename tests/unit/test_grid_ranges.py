"""The grid engine reads declared value ranges as the launch model holds them: a sorted set of
[LO, HI) intervals (unions since the data branch). It indexed them as one (LO, HI) pair and failed on
every ranged launch it answered (vLLM's fused_moe_kernel at 100,000 tokens x top-k 6: TL050
IndexError); a union is bounded by its hull."""

from __future__ import annotations

import pytest

from tilelens_lsp.pipeline import analyze_path

KERNEL = '''import triton
import triton.language as tl


# tilelens: gather[(2 ** 18,)](i32[2 ** 18 * 4].values([(0, 100), -1]), fp32[100], fp32[2 ** 18 * 4])
@triton.jit
def gather(idx, tab, out):
    offs = tl.program_id(0) * 4 + tl.arange(0, 4)
    i = tl.load(idx + offs)
    tl.store(out + offs, tl.load(tab + i, mask=i >= 0))
'''


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
