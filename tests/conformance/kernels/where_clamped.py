"""tl.where keeps the addresses in range (clamped offsets, no load mask); the store is masked."""
import triton
import triton.language as tl


@triton.jit
def clamp_gather_kernel(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = offs + shift
    src = tl.where(src < n, src, n - 1)
    src = tl.where(src >= 0, src, 0)
    v = tl.load(x_ptr + src)
    tl.store(y_ptr + offs, v, mask=offs < n)


# tilelens: clamp_gather_kernel[(cdiv(40, 16),)](fp32[40], fp32[40], 40, 5, BLOCK=16)
# tilelens: clamp_gather_kernel[(2,)](fp32[30], fp32[30], 30, -7, BLOCK=16)
