"""Nested loops: rows in the outer loop (a pid-dependent bound), column chunks in the inner loop."""
import triton
import triton.language as tl


@triton.jit
def nested_sum_kernel(x_ptr, out_ptr, R, C, ROWS_PER_PROG: tl.constexpr, BC: tl.constexpr):
    pid = tl.program_id(0)
    row_end = tl.minimum(pid * ROWS_PER_PROG + ROWS_PER_PROG, R)
    for row in range(pid * ROWS_PER_PROG, row_end):
        acc = tl.zeros((BC,), dtype=tl.float32)
        for c0 in range(0, C, BC):
            cols = c0 + tl.arange(0, BC)
            acc += tl.load(x_ptr + row * C + cols, mask=cols < C, other=0.0)
        tl.store(out_ptr + row, tl.sum(acc, axis=0))


# tilelens: nested_sum_kernel[(cdiv(7, 2),)](fp32[7, 40], fp32[7], 7, 40, ROWS_PER_PROG=2, BC=16)
# tilelens: nested_sum_kernel[(2,)](fp32[6, 32], fp32[6], 6, 32, ROWS_PER_PROG=3, BC=32)
