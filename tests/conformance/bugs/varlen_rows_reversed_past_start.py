"""Bug: the backwards rows are one too low (`eos - 2 - o_t`): the last row a sequence reads is bos - 1,
row -1 of x for the first sequence."""
import triton
import triton.language as tl


@triton.jit
def varlen_reversed_kernel(x, y, cu_seqlens, D: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    i_n = tl.program_id(1)
    bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < eos - bos
    o_d = tl.arange(0, D)
    rows = eos - 2 - o_t
    v = tl.load(x + rows[:, None] * D + o_d[None, :], mask=m_t[:, None], other=0.0)
    tl.store(y + (bos + o_t)[:, None] * D + o_d[None, :], v, mask=m_t[:, None])


# tilelens: N = 100
# tilelens: B = 4
# tilelens: varlen_reversed_kernel[(cdiv(N, 16), B)](fp32[N, 8], fp32[N, 8], i32[B + 1].values(0, N + 1), D=8, BT=16)
# expect: TL002 at line 17
