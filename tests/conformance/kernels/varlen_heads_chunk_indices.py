"""fla's varlen layout with heads (chunk_local_cumsum_scalar): program pid is head pid % H of chunk
pid // H, whose (sequence, chunk) pair is loaded from chunk_indices; the chunk's rows bos + o_t of
sequence i_n are masked by `o_t < eos - bos`, each row H elements wide (head i_h at column i_h). The
rows stay below eos <= T only by the relation between the two loaded offsets (declared in [0, T])."""
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
    p = (bos + o_t) * H + i_h
    v = tl.load(x + p, mask=m_t, other=0.0)
    tl.store(y + p, v + 1.0, mask=m_t)


# tilelens: T = 200
# tilelens: N = 4
# tilelens: H = 3
# tilelens: BT = 16
# tilelens: NC = 16
# tilelens: varlen_heads_kernel[(NC * H,)](fp32[T, H], fp32[T, H], i32[N + 1].values(0, T + 1), i32[NC, 2].values(0, N), H=H, BT=BT)
# sequences of 50, 70 and 80 rows, chunk indices below 4 (each sequence's rows up to 64 are read)
# tilelens: varlen_heads_kernel[(NC * H,)](fp32[T, H], fp32[T, H], i32[N + 1].values([0, 50, 120, T]), i32[NC, 2].values(0, N), H=H, BT=BT)
