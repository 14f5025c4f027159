"""A histogram over float bucket edges at 2**20 programs: a value's bucket is the number of the 16
edges at or below it (`tl.sum` of a comparison widened to 0 or 1), so 16 bins leave out the values at or above the last edge."""
import triton
import triton.language as tl


@triton.jit
def bucket_counts(x_ptr, edges_ptr, hist_ptr, n, B: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    edges = tl.load(edges_ptr + tl.arange(0, B))
    bucket = tl.sum((x[:, None] >= edges[None, :]).to(tl.int32), 1)
    tl.atomic_add(hist_ptr + bucket, 1, mask=offs < n)


# tilelens: bucket_counts[(1048576,)](fp32[134217728], fp32[16], i32[16], 134217728, B=16, BLOCK=128)
