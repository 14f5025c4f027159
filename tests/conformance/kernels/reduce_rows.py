"""Row reductions over a 2-D tile (sum, max, min) written per row."""
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, sum_ptr, max_ptr, min_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    rmask = rows < M
    tl.store(sum_ptr + rows, tl.sum(x, axis=1), mask=rmask)
    tl.store(max_ptr + rows, tl.max(tl.where(mask, x, -float("inf")), axis=1), mask=rmask)
    tl.store(min_ptr + rows, tl.min(tl.where(mask, x, float("inf")), axis=1), mask=rmask)


# tilelens: row_stats_kernel[(cdiv(21, 8),)](fp32[21, 30], fp32[21], fp32[21], fp32[21], 21, 30, 30, BM=8, BN=32)
# tilelens: row_stats_kernel[(2,)](tensor(fp32, (16, 16), strides=(20, 1), storage=320), fp32[16], fp32[16], fp32[16], 16, 16, 20, BM=8, BN=16)
