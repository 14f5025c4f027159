"""Two real bugs: an unmasked tail store, and a row offset computed in int32 that overflows."""

import triton
import triton.language as tl

# tilelens: scale_kernel[(cdiv(1000, 128),)](fp32[1000], fp32[1000], 1000, 2.0, BLOCK=128)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha)  # BUG: the tail block writes past the end


# A 70000 x 40000 fp16 matrix has 2.8e9 elements: row * stride no longer fits in int32.
# tilelens: ROWS = 70000
# tilelens: COLS = 40000
# tilelens: row_sum_kernel[(ROWS,)](fp16[ROWS, COLS], fp32[ROWS], COLS, COLS, BLOCK=64)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    row_start = row * stride_row  # BUG: int32 product overflows past row 53687
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for col in range(0, n_cols, BLOCK):
        cols = col + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row_start + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
