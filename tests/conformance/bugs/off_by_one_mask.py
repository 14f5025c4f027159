"""Bug: the tail mask uses `<=`, so one element past the end is read and written."""
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2, mask=mask)


# tilelens: scale_kernel[(cdiv(100, 32),)](fp32[100], fp32[100], 100, BLOCK=32)
# expect: TL001 at line 10
# expect: TL001 at line 11
