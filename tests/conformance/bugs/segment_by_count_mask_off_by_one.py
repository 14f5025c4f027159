"""Bug: `seg <= nseg` for `seg < nseg`: a token past every segment end counts all of them and adds
into the slot one past the last segment."""
import triton
import triton.language as tl


@triton.jit
def segment_by_count_kernel(cu_ptr, x_ptr, out_ptr, nseg, BLOCK_B: tl.constexpr):
    tok = tl.program_id(0)
    segs = tl.arange(0, BLOCK_B)
    ends = tl.load(cu_ptr + 1 + segs, mask=segs < nseg, other=0)
    seg = tl.sum((ends <= tok).to(tl.int32))
    x = tl.load(x_ptr + tok)
    tl.atomic_add(out_ptr + seg, x, mask=seg <= nseg)


# tilelens: segment_by_count_kernel[(40,)](i32[9].values(0, 41), fp32[40], fp32[8], 8, BLOCK_B=8)
# expect: TL002 at line 14
