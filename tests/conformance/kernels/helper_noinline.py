"""`@triton.jit(noinline=True)` helpers do the accesses: real calls in the IR, not inlined.
(noinline helpers take scalar arguments only.)"""
import triton
import triton.language as tl

from helpers.memops import accumulate, scaled_copy_block


@triton.jit
def noinline_kernel(x_ptr, y_ptr, total_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    scaled_copy_block(x_ptr, y_ptr, pid * BLOCK, n, BLOCK)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    accumulate(total_ptr, pid % 4, tl.sum(x, axis=0))


# tilelens: noinline_kernel[(cdiv(50, 16),)](fp32[50], fp32[50], fp32[4], 50, BLOCK=16)
# tilelens: noinline_kernel[(2,)](fp32[32], fp32[32], fp32[4], 32, BLOCK=16)
