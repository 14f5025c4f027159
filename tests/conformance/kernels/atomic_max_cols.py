"""Column maxima with atomic_max: integer values, and float values (lowered to int atomics)."""
import triton
import triton.language as tl


@triton.jit
def col_max_kernel(x_ptr, imax_ptr, fmax_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=-1.0)
    colmax = tl.max(x, axis=0)
    tl.atomic_max(imax_ptr + cols, (colmax * 1000).to(tl.int32), mask=cols < N)
    tl.atomic_max(fmax_ptr + cols, colmax, mask=cols < N)


# tilelens: col_max_kernel[(cdiv(20, 8),)](fp32[20, 12], i32[12], fp32[12], 20, 12, BM=8, BN=16)
# tilelens: col_max_kernel[(2,)](fp32[16, 32], i32[32], fp32[32], 16, 32, BM=8, BN=32)
