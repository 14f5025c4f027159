"""Bug twin of varlen_heads.py: the address is shifted by one row (`bos + o_t + 1`), so the last row
of a sequence ending at eos = T reads and writes row T, one past the storage: element T * H + i_h."""
import triton
import triton.language as tl


@triton.jit
def varlen_heads_kernel(x, y, cu_seqlens, chunk_indices, H: tl.constexpr, BT: tl.constexpr):
    pid = tl.program_id(0)
    i_h = pid % H
    i_c = pid // H
    i_n = tl.load(chunk_indices + i_c * 2)
    i_t = tl.load(chunk_indices + i_c * 2 + 1)
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < eos - bos
    p = (bos + o_t + 1) * H + i_h
    v = tl.load(x + p, mask=m_t, other=0.0)
    tl.store(y + p, v + 1.0, mask=m_t)


# tilelens: T = 2**20
# tilelens: N = 64
# tilelens: H = 16
# tilelens: BT = 64
# tilelens: varlen_heads_kernel[(T // BT * H,)](fp32[T, H], fp32[T, H], i32[N + 1].values(0, T + 1), i32[T // BT, 2].values(0, N), H=H, BT=BT)
