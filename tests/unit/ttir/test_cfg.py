"""Function bodies as control-flow graphs: the reader keeps blocks and branches, the walk order and
reachability of tilelens_lsp.ttir.cfg, and the verdicts both engines give behind early returns."""

from __future__ import annotations

import pytest

from tests.support import compile_file
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir import cfg
from tilelens_lsp.ttir import reader as ttir

EARLY_RETURN = """
import triton
import triton.language as tl

# tilelens: k[(8,)](fp32[1000], 1000, BLOCK=256)
@triton.jit
def k(X, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + offs, tl.load(X + offs) + 1)
"""

NESTED = """
import triton
import triton.language as tl

# tilelens: k[(10,)](fp32[300], 300, BLOCK=32)
@triton.jit
def k(X, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    shift = 0
    if pid > 2:
        if pid > 5:
            return
        shift = 1
    else:
        shift = 0
    offs = (pid + shift) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + offs, 1.0, mask=offs < n)
"""


def _write(tmp_path, source: str):
    path = tmp_path / "kernel.py"
    path.write_text(source)
    return path


def test_the_reader_keeps_the_blocks_their_arguments_and_the_branches(tmp_path):
    (compiled,) = compile_file(_write(tmp_path, NESTED), tmp_path)
    module = ttir.parse_module(compiled.text)
    ttir.check_alignment(module, compiled.module)
    body = module.funcs[module.entry].body
    assert len(body.blocks) == 4
    join = [b for b in body.blocks[1:] if b.args]
    assert len(join) == 1 and len(join[0].args) == 1
    branches = [b.ops[-1] for b in body.blocks if b.ops[-1].name == "cf.cond_br"]
    assert len(branches) == 2
    assert all(len(op.successors) == 2 for op in branches)
    # each branch passes its shift (a constant) to the join block on one of its edges
    assert sorted(len(s.operands) for op in branches for s in op.successors) == [0, 0, 1, 1]


def test_alignment_refuses_a_branch_to_a_block_the_region_does_not_have(tmp_path):
    (compiled,) = compile_file(_write(tmp_path, EARLY_RETURN), tmp_path)
    module = ttir.parse_module(compiled.text.replace("^bb1 ", "^bb7 ").replace("^bb1,", "^bb7,"))
    with pytest.raises(Refusal) as info:
        ttir.check_alignment(module, compiled.module)
    assert info.value.kind == "reader-misalignment"


def _region(edges: dict[str, list[str]]) -> ttir.Region:
    blocks = []
    for label, targets in edges.items():
        name = "cf.cond_br" if len(targets) == 2 else "cf.br" if targets else "tt.return"
        term = ttir.Op(name, [], [], "", "", [], successors=[ttir.Successor(t, ()) for t in targets])
        blocks.append(ttir.Block([], [term], label))
    return ttir.Region(blocks)


def test_blocks_are_walked_in_topological_order():
    region = _region({"bb0": ["bb2", "bb1"], "bb1": ["bb2"], "bb2": []})
    assert cfg.order(region) == [0, 1, 2]


def test_a_loop_built_from_blocks_is_refused_by_name():
    region = _region({"bb0": ["bb1"], "bb1": ["bb0", "bb2"], "bb2": []})
    with pytest.raises(Refusal) as info:
        cfg.order(region)
    assert info.value.kind == "control-flow"


def test_postdominators_of_a_diamond_include_the_join():
    region = _region({"bb0": ["bb1", "bb2"], "bb1": ["bb3"], "bb2": ["bb3"], "bb3": []})
    pdom = cfg.postdominators(region, cfg.order(region))
    assert pdom[0] == {0, 3} and pdom[1] == {1, 3} and pdom[3] == {3}


@pytest.mark.parametrize("engine", ["auto", "enumerate"])
def test_the_accesses_after_an_early_return_are_examined(tmp_path, monkeypatch, engine):
    monkeypatch.setenv("TILELENS_ENGINE", engine)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    (launch,) = analyze_path(_write(tmp_path, EARLY_RETURN), tmp_path).launches
    assert launch.status == "analyzed"
    assert sorted(d.code for d in launch.diagnostics) == ["TL001", "TL001"]
    witness = launch.diagnostics[0].witness
    assert witness.pid == (3, 0, 0) and witness.element == 1000


@pytest.mark.parametrize("engine", ["auto", "enumerate"])
def test_values_joined_after_nested_returns_are_per_program(tmp_path, monkeypatch, engine):
    monkeypatch.setenv("TILELENS_ENGINE", engine)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    (launch,) = analyze_path(_write(tmp_path, NESTED), tmp_path).launches
    assert launch.status == "analyzed" and not launch.diagnostics
    (store,) = launch.accesses
    # programs 0..2 stay (0..95), 3..5 shift by 1 block (128..223); 6..9 return
    assert store.exact and store.elements == (
        (0, 96),
        (128, 224),
    )
