"""Elementwise kernel without a mask: correct only because N is a multiple of the block."""
import triton
import triton.language as tl


@triton.jit
def square_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * x)


# tilelens: square_kernel[(8,)](fp32[256], fp32[256], BLOCK=32)
# tilelens: square_kernel[(3,)](fp16[192], fp32[192], BLOCK=64)
