"""Bug: the block table may hold 10 (values=(0, 11)), one block past a 10-block cache. The chunk of
block numbers is loaded under a mask that loaded data decides (`offs_b < num_blocks`, `other=0`): the
rows of block 10 are read past the cache."""
import triton
import triton.language as tl


@triton.jit
def paged_blocks_kernel(k_cache, block_tables, seq_lens, out_ptr, max_blocks,
                        KV_BLOCKS: tl.constexpr, BLOCK_SIZE: tl.constexpr, HEAD_DIM: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, HEAD_DIM)
    seq_len = tl.load(seq_lens + b)
    num_blocks = tl.cdiv(seq_len, BLOCK_SIZE)
    acc = tl.zeros((HEAD_DIM,), dtype=tl.float32)
    for start in range(0, num_blocks, KV_BLOCKS):
        offs_b = start + tl.arange(0, KV_BLOCKS)
        bmask = offs_b < num_blocks
        blk = tl.load(block_tables + b * max_blocks + offs_b, mask=bmask, other=0)
        t = tl.arange(0, BLOCK_SIZE)
        tok = offs_b[:, None] * BLOCK_SIZE + t[None, :]
        kmask = bmask[:, None] & (tok < seq_len)
        off = (blk[:, None] * BLOCK_SIZE + t[None, :])[:, :, None] * HEAD_DIM + d[None, None, :]
        k = tl.load(k_cache + off, mask=kmask[:, :, None], other=0.0)
        acc += tl.sum(tl.sum(k, axis=0), axis=0)
    tl.store(out_ptr + b * HEAD_DIM + d, acc)


# tilelens: paged_blocks_kernel[(3,)](fp32[10, 4, 8], i32[3, 6].values(0, 11), i32[3].values(0, 25), fp32[3, 8], 6, KV_BLOCKS=4, BLOCK_SIZE=4, HEAD_DIM=8)
# expect: TL002 at line 24
