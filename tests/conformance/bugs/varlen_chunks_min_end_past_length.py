"""Bug: varlen_chunks_min_end.py with the chunk's end one past the sequence (`eos - bos + 1` in the
`tl.minimum`): a sequence ending at eos = T reads and writes element T, one past the storage."""
import triton
import triton.language as tl


@triton.jit
def varlen_chunks_kernel(x, y, cu, CHUNK: tl.constexpr):
    s = tl.program_id(0)
    c = tl.program_id(1)
    bos = tl.load(cu + s)
    eos = tl.load(cu + s + 1)
    start = c * CHUNK
    end = tl.minimum(start + CHUNK, eos - bos + 1)
    offs = start + tl.arange(0, CHUNK)
    keep = offs < end
    v = tl.load(x + bos + offs, mask=keep, other=0.0)
    tl.store(y + bos + offs, v * 2.0, mask=keep)


# tilelens: T = 300
# tilelens: N = 4
# tilelens: CHUNK = 32
# tilelens: varlen_chunks_kernel[(N, 4)](fp32[T], fp32[T], i32[N + 1].values(0, T + 1), CHUNK=CHUNK)
# expect: TL002 at line 17
# expect: TL002 at line 18
