"""Tensor descriptor with padding_option="nan": the ragged tail reads NaN, masked out afterwards."""
import triton
import triton.language as tl


@triton.jit
def desc_rowmax_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN],
                                     padding_option="nan")
    tile = desc.load([pid * BM, 0])
    cols = tl.arange(0, BN)
    tile = tl.where(cols[None, :] < N, tile, -float("inf"))
    rows = pid * BM + tl.arange(0, BM)
    tl.store(out_ptr + rows, tl.max(tile, axis=1), mask=rows < M)


# tilelens: desc_rowmax_kernel[(cdiv(37, 16),)](fp32[37, 28], fp32[37], 37, 28, BM=16, BN=32)
# tilelens: desc_rowmax_kernel[(2,)](fp32[32, 64], fp32[32], 32, 64, BM=16, BN=64)
