"""y = a * x + b with float scalar arguments and a tail mask."""
import triton
import triton.language as tl


@triton.jit
def axpb_kernel(x_ptr, y_ptr, a, b, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, a * x + b, mask=m)


# tilelens: axpb_kernel[(cdiv(300, 64),)](fp32[300], fp32[300], 2.5, -1.0, 300, BLOCK=64)
# tilelens: axpb_kernel[(2,)](x_ptr=fp32[40], y_ptr=fp32[40], a=0.5, b=0.25, n=40, BLOCK=32)
