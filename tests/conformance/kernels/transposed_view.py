"""A kernel that reads a `.T` view through the strides it is given (column sums of x = w.T)."""
import triton
import triton.language as tl


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, M, N, stride_m, stride_n, BM: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for m0 in range(0, M, BM):
        rows = m0 + tl.arange(0, BM)
        acc += tl.load(x_ptr + rows * stride_m + col * stride_n, mask=rows < M, other=0.0)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


# tilelens: col_sum_kernel[(12,)](fp32[12, 30].T, fp32[12], 30, 12, 1, 30, BM=16)
# tilelens: col_sum_kernel[(8,)](fp32[20, 8], fp32[8], 20, 8, 8, 1, BM=16)
# tilelens: col_sum_kernel[(8,)](tensor(fp32, (20, 8), strides=(12, 1), offset=2, storage=240), fp32[8], 20, 8, 12, 1, BM=16)
