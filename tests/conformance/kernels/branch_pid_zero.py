"""Program-uniform branch: program 0 alone also writes a header; every program writes its block."""
import triton
import triton.language as tl


@triton.jit
def header_kernel(x_ptr, y_ptr, header_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if pid == 0:
        tl.store(header_ptr + tl.arange(0, 4), tl.zeros((4,), dtype=tl.float32) + n)
    tl.store(y_ptr + offs, x + 1, mask=mask)


# tilelens: header_kernel[(3,)](fp32[70], fp32[70], fp32[4], 70, BLOCK=32)
# tilelens: header_kernel[(1,)](fp32[16], fp32[16], fp32[4], 16, BLOCK=16)
