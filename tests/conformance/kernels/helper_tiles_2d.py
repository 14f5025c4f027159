"""2-D tile indices, masks and offsets from helpers (tuple-returning helper included)."""
import triton
import triton.language as tl

from helpers import tiles


@triton.jit
def helper_tile_add_kernel(a_ptr, b_ptr, c_ptr, M, N, stride_a, stride_b, stride_c,
                           BM: tl.constexpr, BN: tl.constexpr):
    rows, cols = tiles.tile_rows_cols(tl.program_id(0) * BM, tl.program_id(1) * BN, BM, BN)
    mask = tiles.tile_mask(rows, cols, M, N)
    a = tl.load(a_ptr + tiles.tile_offsets(rows, cols, stride_a, 1), mask=mask)
    b = tl.load(b_ptr + tiles.tile_offsets(rows, cols, 1, stride_b), mask=mask)
    tl.store(c_ptr + tiles.tile_offsets(rows, cols, stride_c, 1), a + b, mask=mask)


# tilelens: helper_tile_add_kernel[(cdiv(20, 16), cdiv(18, 16))](fp32[20, 18], fp32[18, 20].T, fp32[20, 18], 20, 18, 18, 20, 18, BM=16, BN=16)
# tilelens: helper_tile_add_kernel[(1, 2)](fp32[16, 32], fp32[32, 16].T, fp32[16, 32], 16, 32, 32, 16, 32, BM=16, BN=16)
