"""Bug: the scalar kernel of segments_split_chunks.py with each chunk ending one past its segment
(`end + 1` in the loop's `tl.minimum`): the last chunk of a segment ending at T reads element T."""
import triton
import triton.language as tl


@triton.jit
def segment_chunks_scalar_kernel(x, out, offsets, NSPLIT: tl.constexpr):
    # the same chunks read one element a trip, unmasked: only the trip's running bounds its address
    b = tl.program_id(0)
    c = tl.program_id(1)
    start = tl.load(offsets + b)
    end = tl.load(offsets + b + 1)
    chunk = tl.cdiv(end - start, NSPLIT)
    lo = start + c * chunk
    acc = 0.0
    for i in range(lo, tl.minimum(lo + chunk, end + 1)):
        acc += tl.load(x + i)
    tl.store(out + b * NSPLIT + c, acc)


# tilelens: T = 700
# tilelens: N = 5
# tilelens: segment_chunks_scalar_kernel[(N, 4)](fp32[T], fp32[N * 4], i32[N + 1].values(0, T + 1), NSPLIT=4)
# expect: TL002 at line 18
