"""Offsets and masks computed by @triton.jit helpers imported from another file."""
import triton
import triton.language as tl

from helpers.tiles import block_offsets, tail_mask


@triton.jit
def helper_offsets_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = block_offsets(tl.program_id(0), BLOCK)
    mask = tail_mask(offs, n)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x - 1, mask=mask)


# tilelens: helper_offsets_kernel[(cdiv(75, 32),)](fp32[75], fp32[75], 75, BLOCK=32)
# tilelens: helper_offsets_kernel[(4,)](fp32[64], fp32[64], 64, BLOCK=16)
