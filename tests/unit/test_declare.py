"""Kernels that take what a plain tensor or scalar cannot declare: dtype-valued constexprs, tensor
descriptors, tuples of tensors. Each is bound through Triton's own binder, so the TTIR must be what Triton
gives for the same values reached another way (a default, a hand-built launch)."""

from __future__ import annotations

import triton
import triton.language as tl

from tilelens_lsp.compile.compiler import compile_launch
from tilelens_lsp.launches.scanner import parse_directives


def launch_of(text: str, kernel: str):
    launches, errors = parse_directives(f"# tilelens: {text}\n", {kernel})
    assert errors == [] and len(launches) == 1, errors
    return launches[0]


def ttir(kernel_obj, text: str, target: str = "cuda:89") -> str:
    name = text.split("[", 1)[0]
    [config] = list(compile_launch(kernel_obj, launch_of(text, name), target))
    assert config.error is None, config.error
    return str(config.module)


# ---------------------------------------------------------------- dtype-valued constexprs


@triton.jit
def cast_kernel(x_ptr, out_ptr, n, OUT_DTYPE: tl.constexpr = tl.bfloat16, BLOCK: tl.constexpr = 128):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x.to(OUT_DTYPE).to(tl.float32), mask=offs < n)


def test_a_declared_dtype_compiles_as_triton_binds_the_same_dtype_from_a_default():
    by_default = ttir(cast_kernel, "cast_kernel[(1,)](fp32[100], fp32[100], 100)")
    for spelling in ("bf16", "bfloat16", "tl.bfloat16", "triton.language.bfloat16"):
        assert ttir(cast_kernel, f"cast_kernel[(1,)](fp32[100], fp32[100], 100, OUT_DTYPE={spelling})") == by_default
    assert "to tensor<128xbf16>" in by_default


def test_another_dtype_compiles_to_another_cast():
    fp16 = ttir(cast_kernel, "cast_kernel[(1,)](fp32[100], fp32[100], 100, tl.float16)")
    assert "to tensor<128xf16>" in fp16 and "bf16" not in fp16
