"""Counting sort's first step at a serving size (1,048,576 rows of 64 bucketed values): each row counts
its buckets with `tl.histogram` and reads the first value of each non-empty bucket at the exclusive
sum of the counts. The counts sum to at most 64, so a non-empty bucket starts at most at 63."""

import triton
import triton.language as tl

# tilelens: R = 1048576
# tilelens: bucket_starts[(R,)](i32[R, 64].values(0, 16), fp32[R, 64], fp32[R, 16], BINS=16, N=64)


@triton.jit
def bucket_starts(bucket_ptr, src_ptr, out_ptr, BINS: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    bucket = tl.load(bucket_ptr + row * N + offs)
    counts = tl.histogram(bucket, BINS)
    starts = tl.cumsum(counts, 0) - counts
    first = tl.load(src_ptr + row * N + starts, mask=counts > 0, other=0.0)
    tl.store(out_ptr + row * BINS + tl.arange(0, BINS), first)
