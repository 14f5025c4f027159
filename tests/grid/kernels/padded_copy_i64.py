"""A megablocks `_padded_copy`-style gather/scatter over 540,000 programs (one row each, top-k 2):
row `index_a // TOP_K` of `a` goes to row `index_b` of `b`, column tiles in a loop; the row offsets
`offset * NUM_COLUMNS` in int64 (the fixed twin of padded_copy_i32.py)."""
import triton
import triton.language as tl


@triton.jit
def padded_copy(a, b, rows_per_bin, NUM_COLUMNS: tl.constexpr, TOP_K: tl.constexpr, BLOCK_X: tl.constexpr):
    index_a = tl.program_id(0).to(tl.int64)
    bin_idx = index_a // rows_per_bin
    offset_in_bin = index_a % rows_per_bin
    index_b = bin_idx * rows_per_bin + offset_in_bin
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


# tilelens: padded_copy[(540000,)](fp16[270000, 8192], fp16[540000, 8192], 67500, NUM_COLUMNS=8192, TOP_K=2, BLOCK_X=1024)
