import triton
import triton.language as tl


@triton.jit
def row_copy_kernel(x_ptr, y_ptr, stride_x, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride_x + cols, mask=cols <= n_cols)      # bug: <= reads one past
    tl.store(y_ptr + row * n_cols + cols, v, mask=cols < n_cols)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs <= n) * 2, mask=offs < n)   # bug: <=


@triton.jit
def gather_kernel(ids_ptr, table_ptr, out_ptr, big, D: tl.constexpr):
    tok = tl.program_id(0)
    row = tl.load(ids_ptr + tok)
    cols = tl.arange(0, D)
    tl.store(out_ptr + tok * D + cols, tl.load(table_ptr + row * D + cols + big * 0))
