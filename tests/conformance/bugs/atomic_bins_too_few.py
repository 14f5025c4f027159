"""Bug: NBINS says 16 but the bins tensor has 8 elements: the atomic_add writes past it."""
import triton
import triton.language as tl


@triton.jit
def bin_count_kernel(x_ptr, bins_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(bins_ptr + offs % NBINS, x, mask=mask)


# tilelens: bin_count_kernel[(4,)](fp32[100], fp32[8], 100, NBINS=16, BLOCK=32)
# expect: TL001 at line 11
