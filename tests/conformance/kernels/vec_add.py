"""Vector add with a tail mask (Triton tutorial 01)."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# tilelens: N = 1000
# tilelens: add_kernel[(cdiv(N, 256),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=256)
# tilelens: N = 77
# tilelens: add_kernel[(cdiv(N, 32),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=32)
# tilelens: add_kernel[(4,)](fp16[128], fp16[128], fp16[128], 128, BLOCK_SIZE=32)
