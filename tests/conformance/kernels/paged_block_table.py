"""Paged KV gather: a block table (declared in [0, NUM_BLOCKS)) maps each sequence's logical block to
a physical block of the cache; the cache footprint is bounded by the table's declared range."""
import triton
import triton.language as tl


@triton.jit
def gather_pages_kernel(table_ptr, cache_ptr, out_ptr, blocks_per_seq, PAGE: tl.constexpr, D: tl.constexpr):
    seq = tl.program_id(0)
    blk = tl.program_id(1)
    phys = tl.load(table_ptr + seq * blocks_per_seq + blk)
    rows = tl.arange(0, PAGE)
    cols = tl.arange(0, D)
    src = cache_ptr + (phys * PAGE + rows[:, None]) * D + cols[None, :]
    dst = out_ptr + ((seq * blocks_per_seq + blk) * PAGE + rows[:, None]) * D + cols[None, :]
    tl.store(dst, tl.load(src))


# tilelens: gather_pages_kernel[(3, 4)](i32[3, 4].values(0, 12), fp16[12 * 8, 16], fp16[3 * 4 * 8, 16], 4, PAGE=8, D=16)
