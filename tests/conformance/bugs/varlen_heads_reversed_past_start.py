"""Bug: varlen_heads_reversed.py reading one row too low (`eos - 2 - o_t`): the last row of a
chunk that covers its whole sequence is row bos - 1, row -1 when bos = 0."""
import triton
import triton.language as tl


@triton.jit
def varlen_heads_reversed_kernel(x, y, cu_seqlens, H: tl.constexpr, BT: tl.constexpr):
    pid = tl.program_id(0)
    i_n = tl.program_id(1)
    i_h = pid % H
    i_t = pid // H
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < eos - bos
    p = (eos - 2 - o_t) * H + i_h
    v = tl.load(x + p, mask=m_t, other=0.0)
    tl.store(y + p, v * 2.0, mask=m_t)


# tilelens: T = 120
# tilelens: N = 3
# tilelens: H = 2
# tilelens: BT = 16
# tilelens: varlen_heads_reversed_kernel[(cdiv(T, BT) * H, N)](fp32[T, H], fp32[T, H], i32[N + 1].values(0, T + 1), H=H, BT=BT)
# expect: TL002 at line 18
# expect: TL002 at line 19
