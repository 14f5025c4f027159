"""Bug: a value at or above every one of the 16 edges falls in bucket 16, the 17th; the histogram
holds 16 bins."""
import triton
import triton.language as tl


@triton.jit
def bucket_counts(x_ptr, edges_ptr, hist_ptr, n, B: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    edges = tl.load(edges_ptr + tl.arange(0, B))
    bucket = tl.sum((x[:, None] >= edges[None, :]).to(tl.int32), 1)
    tl.atomic_add(hist_ptr + bucket, 1, mask=offs < n)


# tilelens: bucket_counts[(4,)](fp32[500], fp32[16], i32[16], 500, B=16, BLOCK=128)
# expect: TL002 at line 13
