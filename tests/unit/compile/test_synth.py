"""Launch synthesis (tilelens_lsp/compile/synth.py): pointers found through locals and helpers, indices that
feed addresses are integer tensors, heuristics' optional pointers passed as None, constexprs from
defaults, compared literals and names; every synthesized launch compiles before it is offered."""

from __future__ import annotations

import triton
import triton.language as tl

from tilelens_lsp.compile import synth
from tilelens_lsp.compile.binding import unwrap


@triton.jit
def _advance(p, step):
    return p + step


@triton.jit
def gather_kernel(
    out,
    weight,
    idx_src,
    stride,
    n_cols,
    eps,
    MODE: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK: tl.constexpr,
    DEPTH: tl.constexpr = 2,
):
    row = tl.program_id(0)
    i = tl.load(idx_src + row)
    src = _advance(weight, i * stride)
    x = tl.load(src + tl.arange(0, BLOCK), mask=tl.arange(0, BLOCK) < n_cols)
    if MODE == "mean":
        x = x * eps
    tl.store(out + row * stride + tl.arange(0, BLOCK), x, mask=tl.arange(0, BLOCK) < n_cols)


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.jit
def varlen_kernel(x, cu_seqlens, T, IS_VARLEN: tl.constexpr, BT: tl.constexpr):
    i = tl.program_id(0)
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i)
    else:
        bos = i * T
    tl.store(x + bos + tl.arange(0, BT), 1.0)


@triton.jit
def float_cast_kernel(y, BLOCK: tl.constexpr):
    tl.store(y + tl.arange(0, BLOCK), tl.float32(-float("inf")))


def test_pointers_are_found_through_locals_and_jit_helpers():
    assert synth.pointer_params(gather_kernel) == {"out", "weight", "idx_src"}


def test_a_pointer_whose_loads_feed_an_address_holds_indices():
    assert synth.index_pointers(gather_kernel, synth.pointer_params(gather_kernel)) == {"idx_src"}


def test_the_first_candidate_reads_the_kernel():
    first = synth.candidates(gather_kernel, [], "gather_kernel")[0]
    assert "idx_src=i32[" in first and "weight=fp32[" in first and "eps=1.0" in first and "stride=128" in first
    assert 'MODE="mean"' in first and "HAS_BIAS=False" in first and "BLOCK=32" in first
    assert "DEPTH" not in first  # its default stands


def test_a_pointer_a_heuristic_tests_for_none_is_first_passed_as_none():
    chain = unwrap(varlen_kernel)
    first = synth.candidates(chain.jit, chain.layers, "varlen_kernel")[0]
    assert "cu_seqlens=None" in first and "IS_VARLEN" not in first


def test_synthesized_launch_compiles():
    import sys

    found = synth.synthesize(gather_kernel, "gather_kernel", synth.compile_check(sys.modules[__name__]))
    assert found.launch is not None and found.tried == 1


def test_a_kernel_no_launch_can_compile_keeps_its_launch_and_says_so():
    import sys

    found = synth.synthesize(float_cast_kernel, "float_cast_kernel", synth.compile_check(sys.modules[__name__]))
    assert found.fails_alike and found.launch is not None and "not callable" in found.error
