"""Column means of a row-major matrix: the loop walks down the rows with the row stride."""
import triton
import triton.language as tl


@triton.jit
def col_mean_kernel(x_ptr, out_ptr, M, N, stride_m, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    mask = cols < N
    acc = tl.zeros((BN,), dtype=tl.float32)
    ptrs = x_ptr + cols
    for m in range(0, M):
        acc += tl.load(ptrs, mask=mask, other=0.0)
        ptrs += stride_m
    tl.store(out_ptr + cols, acc / M, mask=mask)


# tilelens: col_mean_kernel[(cdiv(40, 16),)](fp32[6, 40], fp32[40], 6, 40, 40, BN=16)
# tilelens: col_mean_kernel[(1,)](tensor(fp32, (4, 10), strides=(16, 1), offset=2, storage=66), fp32[10], 4, 10, 16, BN=16)
