"""Autotuned row kernel whose configs change both the tile height and the grid (2-D tiles)."""
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BM": 4, "BN": 32}),
        triton.Config({"BM": 8, "BN": 64}),
    ],
    key=["M", "N"],
)
@triton.jit
def autotune_rowscale_kernel(x_ptr, s_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.load(s_ptr + rows, mask=rows < M, other=0.0)
    for c0 in range(0, N, BN):
        cols = c0 + tl.arange(0, BN)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask)
        tl.store(y_ptr + rows[:, None] * stride + cols[None, :], x * s[:, None], mask=mask)


# tilelens: autotune_rowscale_kernel[lambda meta: (cdiv(10, meta["BM"]),)](fp32[10, 70], fp32[10], fp32[10, 70], 10, 70, 70)
# tilelens: autotune_rowscale_kernel[lambda meta: (cdiv(8, meta["BM"]),)](fp32[8, 64], fp32[8], fp32[8, 64], 8, 64, 64)
# tilelens: autotune_rowscale_kernel[lambda meta: (cdiv(10, meta["BM"]),)](tensor(fp32, (10, 70), strides=(80, 1), storage=800), fp32[10], tensor(fp32, (10, 70), strides=(80, 1), storage=800), 10, 70, 80)
