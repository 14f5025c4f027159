"""Kernels that tests hand to `tilelens_lsp.check_launch` (never run: the check compiles them on the host)."""
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def tail_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs <= n) * 2, mask=offs < n)   # bug: <= reads one past


@triton.jit
def gather_kernel(ids_ptr, src_ptr, out_ptr, D: tl.constexpr):
    row = tl.load(ids_ptr + tl.program_id(0))
    cols = tl.arange(0, D)
    tl.store(out_ptr + tl.program_id(0) * D + cols, tl.load(src_ptr + row * D + cols))


@triton.jit
def row_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + tl.program_id(0) * stride + cols, mask=cols < BLOCK)    # bug: the view is n_cols wide
    tl.store(y_ptr + tl.program_id(0) * n_cols + cols, v, mask=cols < n_cols)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def not_a_kernel(x):
    return x
