"""varlen_heads.py with D = 256 features per head: 2^20 tokens x 16 heads x 256 features is 2^32
elements, so the row offset is computed in int64 (the loaded offsets widened first). Clean: the
relation bounds row bos + o_t by eos <= T, and every step of the address is exact in 64 bits."""
import triton
import triton.language as tl


@triton.jit
def varlen_wide_kernel(x, y, cu_seqlens, chunk_indices, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
    pid = tl.program_id(0)
    i_h = pid % H
    i_c = pid // H
    i_n = tl.load(chunk_indices + i_c * 2)
    i_t = tl.load(chunk_indices + i_c * 2 + 1)
    bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
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
