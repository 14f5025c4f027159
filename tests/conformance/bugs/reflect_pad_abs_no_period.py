"""Bug: reflection padding folds the index once with `tl.abs` but not by the reflection period, so a
pad wider than the row reads before its start (column 250 folds to 198 - 250 = -52)."""

import triton
import triton.language as tl


@triton.jit
def reflect_pad_kernel(in_ptr, out_ptr, W_in, pad_left, W_out, BLOCK_W: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    mask = offs < W_out
    t = tl.abs(offs - pad_left)
    iw = tl.where(t < W_in, t, 2 * (W_in - 1) - t)
    v = tl.load(in_ptr + row * W_in + iw, mask=mask, other=0.0)
    tl.store(out_ptr + row * W_out + offs, v, mask=mask)


# tilelens: reflect_pad_kernel[(3, cdiv(300, 32))](fp32[3, 100], fp32[3, 300], 100, 0, 300, BLOCK_W=32)
# expect: TL001 at line 15
