"""Offsets built by tl.reshape of a 1-D range into a 2-D tile and by tl.broadcast_to."""
import triton
import triton.language as tl


@triton.jit
def reshape_copy_kernel(x_ptr, y_ptr, n, R: tl.constexpr, C: tl.constexpr):
    base = tl.program_id(0) * R * C
    offs = base + tl.reshape(tl.arange(0, R * C), (R, C))
    mask = offs < n
    col_scale = tl.broadcast_to(tl.arange(0, C)[None, :], (R, C)).to(tl.float32)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * col_scale, mask=mask)


# tilelens: reshape_copy_kernel[(cdiv(100, 32),)](fp32[100], fp32[100], 100, R=4, C=8)
# tilelens: reshape_copy_kernel[(2,)](fp32[128], fp32[128], 128, R=8, C=8)
