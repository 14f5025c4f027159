"""Add a per-column bias to a 2-D tile: the bias load is a 1-D load broadcast over the rows."""
import triton
import triton.language as tl


@triton.jit
def bias_add_kernel(x_ptr, bias_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask)
    tl.store(y_ptr + rm[:, None] * stride + rn[None, :], x + bias[None, :], mask=mask)


# tilelens: bias_add_kernel[(cdiv(20, 8), cdiv(30, 16))](fp32[20, 30], fp32[30], fp32[20, 30], 20, 30, 30, BM=8, BN=16)
# tilelens: bias_add_kernel[(1, 2)](fp16[8, 32], fp16[32], fp16[8, 32], 8, 32, 32, BM=8, BN=16)
# tilelens: bias_add_kernel[(cdiv(20, 8), cdiv(30, 16))](tensor(fp32, (20, 30), strides=(40, 1), storage=800), fp32[30], tensor(fp32, (20, 30), strides=(40, 1), storage=800), 20, 30, 40, BM=8, BN=16)
