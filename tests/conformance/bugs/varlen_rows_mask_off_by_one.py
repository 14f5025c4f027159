"""Bug: the chunk mask admits o_t == T (`<=` for `<`): the last sequence's chunk reads and writes the
row at eos, one past the N rows when eos = N."""
import triton
import triton.language as tl


@triton.jit
def varlen_rows_kernel(x, y, cu_seqlens, D: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    i_n = tl.program_id(1)
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    T = eos - bos
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t <= T
    o_d = tl.arange(0, D)
    p = (bos + o_t)[:, None] * D + o_d[None, :]
    v = tl.load(x + p, mask=m_t[:, None], other=0.0)
    tl.store(y + p, v * 2, mask=m_t[:, None])


# tilelens: N = 100
# tilelens: B = 4
# tilelens: D = 16
# tilelens: BT = 16
# tilelens: varlen_rows_kernel[(cdiv(N, BT), B)](fp32[N, D], fp32[N, D], i32[B + 1].values(0, N + 1), D=D, BT=BT)
# expect: TL002 at line 18
