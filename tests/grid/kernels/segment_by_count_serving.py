"""`segment_by_count.py` of the conformance corpus at a serving size: 2**20 tokens each find their
segment among 32 by counting the segment ends at or before them (`tl.sum` of a comparison), then add
into its slot under `seg < nseg`."""

import triton
import triton.language as tl

# tilelens: T = 2 ** 20
# tilelens: B = 32
# tilelens: segment_by_count_kernel[(T,)](i32[B + 1].values(0, T + 1), fp32[T], fp32[B], B, BLOCK_B=B)


@triton.jit
def segment_by_count_kernel(cu_ptr, x_ptr, out_ptr, nseg, BLOCK_B: tl.constexpr):
    tok = tl.program_id(0)
    segs = tl.arange(0, BLOCK_B)
    ends = tl.load(cu_ptr + 1 + segs, mask=segs < nseg, other=0)
    seg = tl.sum((ends <= tok).to(tl.int32))
    x = tl.load(x_ptr + tok)
    tl.atomic_add(out_ptr + seg, x, mask=seg < nseg)
