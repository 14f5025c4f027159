"""Split-KV style chunks of varlen sequences: program (s, c) handles chunk c of sequence s, whose
tokens run from cu[s] to cu[s + 1] (both loaded, declared in [0, T]). The chunk ends at
`tl.minimum(start + CHUNK, eos - bos)`, as split-KV decode kernels end a split at the sequence's
length; the mask `offs < end` is both `offs < start + CHUNK` and `offs < eos - bos`, and the second
keeps `bos + offs` below eos <= T by the relation between the two offsets."""
import triton
import triton.language as tl


@triton.jit
def varlen_chunks_kernel(x, y, cu, CHUNK: tl.constexpr):
    s = tl.program_id(0)
    c = tl.program_id(1)
    bos = tl.load(cu + s)
    eos = tl.load(cu + s + 1)
    start = c * CHUNK
    end = tl.minimum(start + CHUNK, eos - bos)
    offs = start + tl.arange(0, CHUNK)
    keep = offs < end
    v = tl.load(x + bos + offs, mask=keep, other=0.0)
    tl.store(y + bos + offs, v * 2.0, mask=keep)


# tilelens: T = 300
# tilelens: N = 4
# tilelens: CHUNK = 32
# tilelens: varlen_chunks_kernel[(N, 4)](fp32[T], fp32[T], i32[N + 1].values(0, T + 1), CHUNK=CHUNK)
# sequences of 40, 100, 0 and 160 tokens (the last one longer than four chunks: its tail is not read)
# tilelens: varlen_chunks_kernel[(N, 4)](fp32[T], fp32[T], i32[N + 1].values([0, 40, 140, 140, T]), CHUNK=CHUNK)
