"""Bug: the grid launches one program per row plus one, and the kernel has no row guard."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


# tilelens: M = 8
# tilelens: row_sum_kernel[(M + 1,)](fp32[M, 30], fp32[M], 30, BLOCK=32)
# expect: TL001 at line 10
# expect: TL001 at line 11
