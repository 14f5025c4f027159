"""Stream compaction and bucketing by conditions on float data, widened to integers: the kept values
of each row packed to its front at the exclusive running sum of `(x > 0).to(tl.int32)` (0 or 1
whatever x is), and a histogram whose bucket is the count of edges at or below a value (`tl.sum` of
a widened comparison, at most the number of edges)."""
import triton
import triton.language as tl


@triton.jit
def compact_positive(x_ptr, out_ptr, count_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    keep = (x > 0).to(tl.int32)
    pos = tl.cumsum(keep, 0) - keep
    tl.store(out_ptr + row * N + pos, x, mask=keep > 0)
    tl.store(count_ptr + row, tl.sum(keep, 0))


@triton.jit
def bucket_counts(x_ptr, edges_ptr, hist_ptr, n, B: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    edges = tl.load(edges_ptr + tl.arange(0, B))
    bucket = tl.sum((x[:, None] >= edges[None, :]).to(tl.int32), 1)
    tl.atomic_add(hist_ptr + bucket, 1, mask=offs < n)


@triton.jit
def masked_select(inp_ptr, mask_ptr, out_ptr, N, BLOCK: tl.constexpr):
    """FlagGems' single-pass `masked_select`: a kept value goes to the inclusive running sum of the
    mask less one, under the mask: at least 0, since the lane's own term is 1 there."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inp = tl.load(inp_ptr + offsets, mask=offsets < N)
    mask = tl.load(mask_ptr + offsets, mask=offsets < N).to(tl.int1)
    out_offsets = tl.cumsum(mask.to(tl.int32), axis=0) - 1
    tl.store(out_ptr + out_offsets, inp, mask=(offsets < N) & mask)


# tilelens: compact_positive[(4,)](fp32[4, 64], fp32[4, 64], i32[4], N=64)
# tilelens: bucket_counts[(4,)](fp32[500], fp32[16], i32[17], 500, B=16, BLOCK=128)
# tilelens: masked_select[(1,)](fp32[100], i1[100], fp32[100], 100, BLOCK=128)
