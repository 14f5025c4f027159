"""Varlen rows read backwards from each sequence's end, head by head: row eos - 1 - o_t of sequence
i_n (program axis 1), masked by `o_t < eos - bos`, H elements per row. The rows stay at or above bos
>= 0 only by the relation: the mirror image of `bos + o_t < eos`."""
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
    p = (eos - 1 - o_t) * H + i_h
    v = tl.load(x + p, mask=m_t, other=0.0)
    tl.store(y + p, v * 2.0, mask=m_t)


# tilelens: T = 120
# tilelens: N = 3
# tilelens: H = 2
# tilelens: BT = 16
# tilelens: varlen_heads_reversed_kernel[(cdiv(T, BT) * H, N)](fp32[T, H], fp32[T, H], i32[N + 1].values(0, T + 1), H=H, BT=BT)
# tilelens: varlen_heads_reversed_kernel[(cdiv(T, BT) * H, N)](fp32[T, H], fp32[T, H], i32[N + 1].values([0, 30, 64, T]), H=H, BT=BT)
