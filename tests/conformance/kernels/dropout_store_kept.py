"""Dropout that writes only the kept elements: the store mask depends on tl.rand's bits."""
import triton
import triton.language as tl


@triton.jit
def dropout_kept_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, x / (1 - p), mask=mask & keep)


# tilelens: dropout_kept_kernel[(3,)](fp32[90], fp32[90], 90, 0.5, 42, BLOCK=32)
# tilelens: dropout_kept_kernel[(2,)](fp32[64], fp32[64], 64, 0.1, 9, BLOCK=32)
