"""Bug: segments_split_chunks.py with each chunk starting one element early (`- 1`): the first chunk
of a segment starting at 0 reads element -1, before the storage."""
import triton
import triton.language as tl


@triton.jit
def segment_chunks_kernel(x, out, offsets, NSPLIT: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    c = tl.program_id(1)
    start = tl.load(offsets + b)
    end = tl.load(offsets + b + 1)
    chunk = tl.cdiv(end - start, NSPLIT)
    lo = start + c * chunk - 1
    hi = tl.minimum(lo + chunk, end)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(lo, hi, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < hi, other=0.0)
    tl.store(out + b * NSPLIT + c, tl.sum(acc))


# tilelens: T = 700
# tilelens: N = 5
# tilelens: segment_chunks_kernel[(N, 4)](fp32[T], fp32[N * 4], i32[N + 1].values(0, T + 1), NSPLIT=4, BLOCK=32)
# expect: TL002 at line 19
