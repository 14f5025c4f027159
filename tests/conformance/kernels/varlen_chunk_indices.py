"""fla's chunk-local cumsum layout: program (i_t, i_bh) reads its sequence and chunk from chunk_indices,
the sequence's offsets from cu_seqlens (both loaded, widened to 64 bits), and addresses the tokens of
head i_h at `(bos + o_t) * H + i_h` under `o_t < eos - bos`: in bounds because bos + o_t < eos <= T."""
import triton
import triton.language as tl


@triton.jit
def chunk_cumsum_kernel(s, o, cu_seqlens, chunk_indices, H: tl.constexpr, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_h = i_bh % H
    i_n = tl.load(chunk_indices + i_t * 2).to(tl.int32)
    i_t = tl.load(chunk_indices + i_t * 2 + 1).to(tl.int64)
    bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    T = eos - bos
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    b_s = tl.load(s + bos * H + i_h + o_t * H, mask=m_t, other=0.0)
    tl.store(o + bos * H + i_h + o_t * H, tl.cumsum(b_s, axis=0), mask=m_t)


# tilelens: B = 3
# tilelens: H = 4
# tilelens: BT = 16
# tilelens: NT = 8
# tilelens: T = 96
# tilelens: chunk_cumsum_kernel[(NT, H)](fp32[T, H], fp32[T, H], i32[B + 1].values(0, T + 1), i32[NT, 2].values(0, B), H=H, BT=BT)
# tilelens: chunk_cumsum_kernel[(NT, H)](fp32[T, H], fp32[T, H], i32[B + 1].values([0, 30, 64, T]), i32[NT, 2].values(0, B), H=H, BT=BT)
