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


# ---------------------------------------------------------------- locations whatever the user's import set


LINE_INFO_OFF = '''
import os
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"   # what unsloth_zoo's import does, to shrink its binaries
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


# tilelens: copy_kernel[(2,)](fp32[100], fp32[128], 128, BLOCK=64)
'''


def test_findings_keep_their_line_when_the_module_turns_triton_line_info_off(tmp_path, monkeypatch):
    from tilelens_lsp.pipeline import analyze_path

    monkeypatch.delenv("TRITON_DISABLE_LINE_INFO", raising=False)   # restored after, as the module set it
    path = tmp_path / "kernels.py"
    path.write_text(LINE_INFO_OFF)
    result = analyze_path(path, tmp_path)
    [launch] = result.launches
    [finding] = [d for d in launch.diagnostics if d.code == "TL001"]
    load_line, text = next((i, line) for i, line in enumerate(LINE_INFO_OFF.splitlines(), 1) if "tl.load" in line)
    assert (finding.line, finding.column) == (load_line, text.index("tl.load") + 1)


# ---------------------------------------------------------------- values computed from a comparison of loaded data


PAIRWISE = '''
import triton
import triton.language as tl


@triton.jit
def pairwise_count_kernel(ids_ptr, out_ptr, n, NP: tl.constexpr):
    offs = tl.arange(0, NP)
    ids = tl.load(ids_ptr + offs, mask=offs < n, other=-2)
    same = (ids[None, :] == ids[:, None]) & (offs[None, :] < n)   # SGLang's moe_align_small_numel, in small
    cnt = tl.sum(same.to(tl.int32), axis=1)
    spread = tl.sum(cnt[None, :] * (offs[:, None] < n).to(tl.int32), axis=1)
    tl.store(out_ptr + offs, spread, mask=offs < n)


# tilelens: pairwise_count_kernel[(1,)](i32[12].values(-1, 8), i32[12], 12, NP=16)
'''


def test_a_reduction_of_a_comparison_of_loaded_values_is_analysed_not_crashed(tmp_path):
    """A comparison of declared-range values is an unknown mask with a bound of its own shape; a value
    computed from it (here a sum over one axis, then broadcast) must not inherit that bound."""
    from tilelens_lsp.pipeline import analyze_path

    path = tmp_path / "pairwise.py"
    path.write_text(PAIRWISE)
    [launch] = analyze_path(path, tmp_path).launches
    assert launch.status == "analyzed", launch.diagnostics
    assert [d.code for d in launch.diagnostics] == []
