"""Split-KV style chunks of varlen sequences at serving size: 4,096 sequences of a 2**20-token batch,
64 chunks of 256 each (262,144 programs). A chunk ends at `tl.minimum(start + CHUNK, eos - bos)`; the
mask `offs < end` holds only where `offs < eos - bos`, which keeps `bos + offs` below eos <= T. Clean.
"""
import triton
import triton.language as tl

# tilelens: T = 1048576
# tilelens: N = 4096
# tilelens: CHUNK = 256
# tilelens: chunk_copy[(N, 64)](fp32[T], fp32[T], i32[N + 1].values(0, T + 1), CHUNK=CHUNK)
@triton.jit
def chunk_copy(x, y, cu, CHUNK: tl.constexpr):
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
