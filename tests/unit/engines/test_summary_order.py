"""The affine summary computes footprints only once a whole launch is in its fragment, and stops at
the first out-of-bounds site where the enumeration will answer the launch (engines/select.py): both
save work, neither changes an answer."""

from __future__ import annotations

from pathlib import Path

from tilelens_lsp.engines import select
from tilelens_lsp.engines.affine import AffineGraph
from tilelens_lsp.pipeline import analyze_path

KERNEL = """import triton
import triton.language as tl


@triton.jit
def meet(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs // 2, x)  # two lanes, one element: outside the summary's fragment


@triton.jit
def tail(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # past the end of x in the last program
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x + y)


# tilelens: meet[(4,)](fp32[64], fp32[32], BLOCK=16)
# tilelens: tail[(4,)](fp32[60], fp32[64], fp32[64], BLOCK=16)
"""


def _analyze(tmp_path: Path, monkeypatch, imaged: list | None = None):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    if imaged is not None:
        original = AffineGraph.image

        def image(self, off, cons, pred, info):
            imaged.append(self)
            return original(self, off, cons, pred, info)

        monkeypatch.setattr(AffineGraph, "image", image)
    return analyze_path(path, workspace_root=tmp_path).launches


def test_a_launch_that_leaves_the_fragment_at_its_store_costs_no_footprint_of_its_load(tmp_path, monkeypatch):
    imaged: list = []
    meet, _ = _analyze(tmp_path, monkeypatch, imaged)
    assert meet.engine == "enumerate"
    assert [g for g in imaged if g.m.module is not None and "meet" in g.m.module.entry] == []


def test_the_summary_stops_at_the_first_out_of_bounds_site_and_the_enumeration_answers(tmp_path, monkeypatch):
    imaged: list = []
    _, tail = _analyze(tmp_path, monkeypatch, imaged)
    assert tail.engine == "enumerate"
    summaries = {id(g) for g in imaged if "tail" in g.m.module.entry}
    assert len(summaries) == 1 and len([g for g in imaged if "tail" in g.m.module.entry]) == 1  # x's load, then stop
    assert [(d.code, d.witness.pid, d.witness.element) for d in tail.diagnostics] == [("TL001", (3, 0, 0), 60)]


def test_stopping_early_answers_as_the_enumeration_of_the_launch_does(tmp_path, monkeypatch):
    early = _analyze(tmp_path, monkeypatch)
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    enumerated = _analyze(tmp_path, monkeypatch)
    assert [(l.status, l.engine, l.diagnostics, l.accesses) for l in early] == [
        (l.status, l.engine, l.diagnostics, l.accesses) for l in enumerated
    ]
