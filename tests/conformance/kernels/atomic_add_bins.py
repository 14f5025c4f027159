"""Masked atomic_add into a few bins chosen by arithmetic on the offsets (no indirection)."""
import triton
import triton.language as tl


@triton.jit
def bin_sum_kernel(x_ptr, bins_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(bins_ptr + offs % NBINS, x, mask=mask)


# tilelens: bin_sum_kernel[(cdiv(100, 32),)](fp32[100], fp32[8], 100, NBINS=8, BLOCK=32)
# tilelens: bin_sum_kernel[(1,)](fp32[5], fp32[16], 5, NBINS=16, BLOCK=16)
