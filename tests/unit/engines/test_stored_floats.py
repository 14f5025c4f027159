"""Float arithmetic that reaches only the values stores write is never evaluated by the enumeration
(`graph.stored_floats`); everything an address, mask or branch reads still is, and the verdicts
stay those of evaluating every op."""

from __future__ import annotations

from pathlib import Path

from tests.support import compile_file
from tilelens_lsp.engines import select
from tilelens_lsp.engines.enumerate import graph
from tilelens_lsp.engines.enumerate.guards import FuncIndex
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.ttir.reader import parse_module

KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    w = tl.load(w_ptr + offs, mask=offs < n, other=0.0)
    taps = (x * 0.25 + w * 0.75) / 2.0  # reaches the store's value only
    tl.store(out_ptr + offs, taps, mask=offs < n)
    keep = x * 3.0  # reaches a mask: read
    tl.store(out_ptr + offs, w, mask=(offs < n) & (keep > 1.0))
    idx = (w * 4.0).to(tl.int32)  # reaches an address: read
    tl.store(out_ptr + idx, x, mask=offs < n)


# tilelens: k[(4,)](fp32[64], fp32[64], fp32[64], 60, BLOCK=16)
"""


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    return path


def _float_ops(module, chosen: frozenset[int]) -> list[str]:
    ops = [o for f in module.funcs.values() for b in f.body.blocks for o in b.ops]
    return [o.name for o in ops if id(o) in chosen]


def test_only_the_stored_taps_are_left_unevaluated(tmp_path):
    (compiled,) = compile_file(_write(tmp_path), tmp_path)
    module = parse_module(compiled.text)
    chosen = graph.stored_floats(FuncIndex(module.funcs))
    # the taps' two products, their sum and the division (and the constants only they read); not
    # `x * 3.0` (a mask) nor `w * 4.0` (an address)
    names = [n for n in _float_ops(module, chosen) if n != "arith.constant"]
    assert sorted(names) == ["arith.addf", "arith.divf", "arith.mulf", "arith.mulf"]


def test_verdicts_match_evaluating_every_op(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    path = _write(tmp_path)
    (skipping,) = analyze_path(path, workspace_root=tmp_path).launches
    monkeypatch.setattr(graph, "stored_floats", lambda index: frozenset())
    (every,) = analyze_path(path, workspace_root=tmp_path).launches
    assert skipping.engine == "enumerate"
    assert (skipping.status, skipping.diagnostics, skipping.accesses) == (every.status, every.diagnostics, every.accesses)
    # the address read `w * 4.0`: its refusal still names the conversion of loaded data
    assert any(d.code == "TL030" and "fptosi of loaded data" in d.message for d in skipping.diagnostics)
