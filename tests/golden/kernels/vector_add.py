"""Vector add: one masked load per input, one masked store."""
import triton
import triton.language as tl

# tilelens: N = 4000
# tilelens: add_kernel[(cdiv(N, 1024),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=1024)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
