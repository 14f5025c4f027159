"""Bench kernel: vector add (Triton tutorial 01), a masked tail."""

import triton
import triton.language as tl

# tilelens: N = 98432
# tilelens: add_kernel[(cdiv(N, 1024),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=1024)


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)
