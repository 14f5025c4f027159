"""Reflection padding (FlagGems' reflection_pad1d): the output column's index into the row is folded
back with `tl.abs` (math.absi) and a modulo of the reflection period, so any pad reads inside the row."""

import triton
import triton.language as tl


@triton.jit
def reflect_pad_kernel(in_ptr, out_ptr, W_in, pad_left, W_out, BLOCK_W: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    mask = offs < W_out
    p = 2 * (W_in - 1)
    m = tl.abs(offs - pad_left) % p
    iw = tl.where(m < W_in, m, p - m)
    v = tl.load(in_ptr + row * W_in + iw, mask=mask, other=0.0)
    tl.store(out_ptr + row * W_out + offs, v, mask=mask)


# tilelens: reflect_pad_kernel[(4, cdiv(130, 32))](fp32[4, 100], fp32[4, 130], 100, 15, 130, BLOCK_W=32)
# tilelens: reflect_pad_kernel[(3, cdiv(300, 32))](fp32[3, 100], fp32[3, 300], 100, 100, 300, BLOCK_W=32)
