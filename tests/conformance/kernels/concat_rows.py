"""Concatenate two matrices along the columns: the source depends on a program-uniform branch."""
import triton
import triton.language as tl


@triton.jit
def concat_kernel(a_ptr, b_ptr, out_ptr, NA, NB, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    if part == 0:
        v = tl.load(a_ptr + row * NA + cols, mask=cols < NA)
        tl.store(out_ptr + row * (NA + NB) + cols, v, mask=cols < NA)
    else:
        v = tl.load(b_ptr + row * NB + cols, mask=cols < NB)
        tl.store(out_ptr + row * (NA + NB) + NA + cols, v, mask=cols < NB)


# tilelens: concat_kernel[(4, 2)](fp32[4, 20], fp32[4, 12], fp32[4, 32], 20, 12, BLOCK=32)
# tilelens: concat_kernel[(2, 2)](fp16[2, 16], fp16[2, 16], fp16[2, 32], 16, 16, BLOCK=16)
