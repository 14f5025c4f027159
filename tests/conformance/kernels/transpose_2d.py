"""Tiled transpose: read an (M, N) tile, write it to an (N, M) output; 2-D masks by broadcast."""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[:, None] * stride_ym + rm[None, :], tl.trans(tile), mask=tl.trans(mask))


# tilelens: transpose_kernel[(cdiv(30, 16), cdiv(20, 16))](fp32[30, 20], fp32[20, 30], 30, 20, 20, 30, BM=16, BN=16)
# tilelens: transpose_kernel[(1, 2)](tensor(fp16, (16, 24), strides=(32, 1), storage=16 * 32), fp16[24, 16], 16, 24, 32, 16, BM=16, BN=16)
