"""Alignment hints: tl.multiple_of / tl.max_contiguous on offsets do not change the footprint."""
import triton
import triton.language as tl


@triton.jit
def hinted_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.multiple_of(tl.program_id(0) * BLOCK, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(start + tl.arange(0, BLOCK), BLOCK), BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x, mask=mask)


# tilelens: hinted_copy_kernel[(cdiv(200, 64),)](fp32[200], fp32[200], 200, BLOCK=64)
# tilelens: hinted_copy_kernel[(2,)](fp16[64], fp16[64], 64, BLOCK=32)
