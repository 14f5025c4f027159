"""A megablocks `_padded_copy`-style kernel over 540,000 programs: each program moves one row between
the token order and the expert-padded order, with indices and bin boundaries loaded from tensors
(declared value ranges). The row offsets `offset * NUM_COLUMNS` are int32 and pass 2**31 once a
row index reaches 262144."""
import triton
import triton.language as tl


@triton.jit
def padded_copy(a, b, indices, bin_ids, bins, padded_bins, NUM_COLUMNS: tl.constexpr, TOP_K: tl.constexpr,
                BLOCK_X: tl.constexpr):
    pid = tl.program_id(0)
    index_a = tl.load(indices + pid)
    bin_idx = tl.load(bin_ids + pid)
    start = tl.load(bins + bin_idx)
    padded = tl.load(padded_bins + bin_idx)
    index_b = pid - start + padded
    offset = index_a // TOP_K
    a += offset * NUM_COLUMNS
    b += index_b * NUM_COLUMNS
    offsets = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK_X), BLOCK_X), BLOCK_X)
    iterations = tl.cdiv(NUM_COLUMNS, BLOCK_X)
    for _ in range(iterations):
        mask = offsets < NUM_COLUMNS
        x = tl.load(a + offsets, mask=mask)
        tl.store(b + offsets, x, mask=mask)
        offsets += BLOCK_X


# tilelens: padded_copy[(540000,)](fp16[270000, 8192], fp16[540000, 8192], i32[540000].values(0, 540000), i32[540000].values(0, 8), i32[8].values(0, 1), i32[8].values(0, 1), NUM_COLUMNS=8192, TOP_K=2, BLOCK_X=1024)
