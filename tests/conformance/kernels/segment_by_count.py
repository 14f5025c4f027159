"""Each token finds its segment by counting the segment ends at or before it (`tl.sum` of a
comparison of loaded offsets, the searchsorted of varlen kernels without a loop), then adds into its
segment's slot under `seg < nseg`. The count is bounded by the lanes whose comparison may hold."""
import triton
import triton.language as tl


@triton.jit
def segment_by_count_kernel(cu_ptr, x_ptr, out_ptr, nseg, BLOCK_B: tl.constexpr):
    tok = tl.program_id(0)
    segs = tl.arange(0, BLOCK_B)
    ends = tl.load(cu_ptr + 1 + segs, mask=segs < nseg, other=0)
    seg = tl.sum((ends <= tok).to(tl.int32))
    x = tl.load(x_ptr + tok)
    tl.atomic_add(out_ptr + seg, x, mask=seg < nseg)


# tilelens: segment_by_count_kernel[(40,)](i32[9].values(0, 41), fp32[40], fp32[8], 8, BLOCK_B=8)
# tilelens: segment_by_count_kernel[(40,)](i32[6].values(0, 41), fp32[40], fp32[5], 5, BLOCK_B=8)
