"""Each segment of a packed tensor split into NSPLIT chunks, one program a chunk: segment b runs from
offsets[b] to offsets[b + 1] (both loaded, declared in [0, T]), chunk c from `lo = start + c * chunk`
to `tl.minimum(lo + chunk, end)`, with `chunk = cdiv(end - start, NSPLIT)`. The loop starts at `lo`,
whose interval reaches below `start` (a declared range allows end < start, where chunk is negative),
but it runs only where `lo < tl.minimum(lo + chunk, end)`: where chunk is positive, so at or past
`start`. The mask keeps each read below `end`; in the scalar kernel, unmasked, the trip's running does."""
import triton
import triton.language as tl


@triton.jit
def segment_chunks_kernel(x, out, offsets, NSPLIT: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    c = tl.program_id(1)
    start = tl.load(offsets + b)
    end = tl.load(offsets + b + 1)
    chunk = tl.cdiv(end - start, NSPLIT)
    lo = start + c * chunk
    hi = tl.minimum(lo + chunk, end)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(lo, hi, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < hi, other=0.0)
    tl.store(out + b * NSPLIT + c, tl.sum(acc))


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
    for i in range(lo, tl.minimum(lo + chunk, end)):
        acc += tl.load(x + i)
    tl.store(out + b * NSPLIT + c, acc)


# tilelens: T = 700
# tilelens: N = 5
# tilelens: segment_chunks_kernel[(N, 4)](fp32[T], fp32[N * 4], i32[N + 1].values(0, T + 1), NSPLIT=4, BLOCK=32)
# segments of 0, 33, 250, 1 and 416 elements
# tilelens: segment_chunks_kernel[(N, 4)](fp32[T], fp32[N * 4], i32[N + 1].values([0, 33, 283, 284, T]), NSPLIT=4, BLOCK=32)
# tilelens: segment_chunks_scalar_kernel[(N, 4)](fp32[T], fp32[N * 4], i32[N + 1].values(0, T + 1), NSPLIT=4)
# tilelens: segment_chunks_scalar_kernel[(N, 4)](fp32[T], fp32[N * 4], i32[N + 1].values([0, 33, 283, 284, T]), NSPLIT=4)
