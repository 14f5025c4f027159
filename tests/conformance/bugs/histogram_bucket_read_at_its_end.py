"""Bug: the first value of each bucket read at `tl.cumsum(counts)` (where the bucket ends) for
`tl.cumsum(counts) - counts`: when every value of the last row falls in one bucket, that bucket
ends at 64, one past the row and past the tensor."""
import triton
import triton.language as tl


@triton.jit
def loaded_bucket_starts(bucket_ptr, src_ptr, out_ptr, BINS: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    bucket = tl.load(bucket_ptr + row * N + offs)
    counts = tl.histogram(bucket, BINS)
    ends = tl.cumsum(counts, 0)
    first = tl.load(src_ptr + row * N + ends, mask=counts > 0, other=0.0)
    tl.store(out_ptr + row * BINS + tl.arange(0, BINS), first)


# tilelens: loaded_bucket_starts[(3,)](i32[3, 64].values(0, 16), fp32[3, 64], fp32[3, 16], BINS=16, N=64)
# expect: TL002 at line 15
