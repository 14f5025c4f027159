"""Bug: the caller passes the strides of the un-transposed matrix for a `.T` view."""
import triton
import triton.language as tl


@triton.jit
def copy2d_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], tile, mask=mask)


# The view x = w.T has shape (30, 20) and strides (1, 30); the launch wrongly passes (30, 1).
# tilelens: copy2d_kernel[(2, 2)](fp32[20, 30].T, fp32[30, 20], 30, 20, 30, 1, BM=16, BN=16)
# expect: TL001 at line 11
