"""Bug: behind a data-dependent early return, the row loop reads one column too many; only a bound
is known (the row may be skipped), so it is a possible out-of-bounds (TL002)."""
import triton
import triton.language as tl


@triton.jit
def skip_rows_kernel(flags_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if tl.load(flags_ptr + row) == 0:
        return
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * n_cols + cols, mask=cols <= n_cols)
    tl.store(x_ptr + row * n_cols + cols, v * 2, mask=cols < n_cols)


# tilelens: skip_rows_kernel[(6,)](i32[6], fp32[6, 50], 50, BLOCK=64)
# expect: TL002 at line 13
