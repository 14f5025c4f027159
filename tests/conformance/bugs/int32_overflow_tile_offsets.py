"""Bug: the 2-D element offsets `rows * stride + cols` are int32 while the tensor holds more than
2**31 elements: the tiles of the last rows wrap around."""
import triton
import triton.language as tl


@triton.jit
def tail_rows_kernel(x_ptr, out_ptr, row0, stride, n_cols, BM: tl.constexpr, BN: tl.constexpr):
    rows = row0 + tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    offs = rows[:, None] * stride + cols[None, :]
    tile = tl.load(x_ptr + offs, mask=cols[None, :] < n_cols, other=0.0)
    tl.store(out_ptr + tl.program_id(0) * BM + tl.arange(0, BM), tl.sum(tile, axis=1))


# tilelens: M = 40000
# tilelens: C = 60000
# tilelens: tail_rows_kernel[(2,)](fp16[M, C], fp32[32], M - 32, C, 50, BM=16, BN=64)
# expect: TL003 at line 11
