"""A paged-attention decode (vLLM's first version, one program per sequence and head): 8,192
programs, each looping over up to 256 blocks of 16 tokens whose numbers it loads from the block
table. Enumerating it would take billions of evaluations. Clean.
"""
import triton
import triton.language as tl

# tilelens: B = 256
# tilelens: H = 32
# tilelens: D = 128
# tilelens: BS = 16
# tilelens: NB = 20000
# tilelens: MAXB = 256
# tilelens: paged_decode[(B, H)](fp16[B, H, D], fp16[NB, BS, H, D], fp16[NB, BS, H, D], i32[B, MAXB].values(0, NB), i32[B].values(1, MAXB * BS + 1), fp16[B, H, D], 0.125, MAXB, H * D, BS * H * D, BLOCK_SIZE=BS, HEAD_DIM=D, NUM_HEADS=H)
@triton.jit
def paged_decode(q_ptr, k_cache, v_cache, block_tables, seq_lens, out_ptr, scale, max_blocks, stride_tok, stride_blk,
                 BLOCK_SIZE: tl.constexpr, HEAD_DIM: tl.constexpr, NUM_HEADS: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + (b * NUM_HEADS + h) * HEAD_DIM + d).to(tl.float32)
    seq_len = tl.load(seq_lens + b)
    num_blocks = tl.cdiv(seq_len, BLOCK_SIZE)
    m = float("-inf")
    l = 0.0
    acc = tl.zeros((HEAD_DIM,), dtype=tl.float32)
    t = tl.arange(0, BLOCK_SIZE)
    for i in range(0, num_blocks):
        blk = tl.load(block_tables + b * max_blocks + i)
        tok = i * BLOCK_SIZE + t
        valid = tok < seq_len
        off = blk * stride_blk + t[:, None] * stride_tok + h * HEAD_DIM + d[None, :]
        k = tl.load(k_cache + off, mask=valid[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1) * scale
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m - m_new)
        v = tl.load(v_cache + off, mask=valid[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l = l * alpha + tl.sum(p)
        m = m_new
    tl.store(out_ptr + (b * NUM_HEADS + h) * HEAD_DIM + d, (acc / l).to(tl.float16))
