"""Counting sort's first step: each row buckets its 64 values with `tl.histogram` and reads the first
value of each non-empty bucket at the bucket's start, the exclusive sum of the counts
(`tl.cumsum(counts) - counts`). A bucket's count lies in [0, 64] and all counts sum to at most 64,
so a non-empty bucket starts at most at 63: the sum bounds the starts where the counts alone would
not. Buckets loaded from a declared range, and buckets computed from the lane (counted exactly)."""
import triton
import triton.language as tl


@triton.jit
def loaded_bucket_starts(bucket_ptr, src_ptr, out_ptr, BINS: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    bucket = tl.load(bucket_ptr + row * N + offs)
    counts = tl.histogram(bucket, BINS)
    starts = tl.cumsum(counts, 0) - counts
    first = tl.load(src_ptr + row * N + starts, mask=counts > 0, other=0.0)
    tl.store(out_ptr + row * BINS + tl.arange(0, BINS), first)


@triton.jit
def computed_bucket_starts(src_ptr, out_ptr, BINS: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    counts = tl.histogram((offs * 7 + row) % 5, BINS)
    starts = tl.cumsum(counts, 0) - counts
    first = tl.load(src_ptr + row * N + starts, mask=counts > 0, other=0.0)
    tl.store(out_ptr + row * BINS + tl.arange(0, BINS), first)


# tilelens: loaded_bucket_starts[(3,)](i32[3, 64].values(0, 16), fp32[3, 64], fp32[3, 16], BINS=16, N=64)
# tilelens: computed_bucket_starts[(3,)](fp32[3, 64], fp32[3, 16], BINS=16, N=64)
