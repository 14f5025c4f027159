"""Bug twin of varlen_heads_wide_i64.py: the offsets stay int32, and ((bos + o_t) * H + i_h) * D
reaches 2^32 - 1 for the last rows: the address arithmetic may wrap, so the relation must not
bound it (the grid engine bounds such an address by the whole width, never clean)."""
import triton
import triton.language as tl


@triton.jit
def varlen_wide_kernel(x, y, cu_seqlens, chunk_indices, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
    pid = tl.program_id(0)
    i_h = pid % H
    i_c = pid // H
    i_n = tl.load(chunk_indices + i_c * 2)
    i_t = tl.load(chunk_indices + i_c * 2 + 1)
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < eos - bos
    p = ((bos + o_t) * H + i_h)[:, None] * D + tl.arange(0, D)[None, :]
    v = tl.load(x + p, mask=m_t[:, None], other=0.0)
    tl.store(y + p, v + 1.0, mask=m_t[:, None])


# tilelens: T = 2**20
# tilelens: N = 64
# tilelens: H = 16
# tilelens: D = 256
# tilelens: BT = 64
# tilelens: varlen_wide_kernel[(T // BT * H,)](fp32[T, H, D], fp32[T, H, D], i32[N + 1].values(0, T + 1), i32[T // BT, 2].values(0, N), H=H, D=D, BT=BT)
