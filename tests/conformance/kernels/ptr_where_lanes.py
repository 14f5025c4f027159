"""A pointer chosen per lane (`tl.where(c, a_ptr + offs, b_ptr + offs)`): even lanes write `a`,
odd lanes write `b`, each checked against its own storage."""
import triton
import triton.language as tl


@triton.jit
def interleave_kernel(a_ptr, b_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    dst = tl.where(offs % 2 == 0, a_ptr + offs // 2, b_ptr + offs // 2)
    tl.store(dst, v, mask=mask)


# tilelens: interleave_kernel[(4,)](fp32[50], fp32[50], fp32[100], 100, BLOCK=32)
