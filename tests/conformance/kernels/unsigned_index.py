"""Unsigned index math: uint32 offsets and a uint8 data type."""
import triton
import triton.language as tl


@triton.jit
def u32_index_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.uint32)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.uint32)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, v, mask=mask)


# tilelens: u32_index_kernel[(cdiv(90, 32),)](u8[90], u8[90], 90, BLOCK=32)
# tilelens: u32_index_kernel[(2,)](fp32[40], fp32[40], 40, BLOCK=32)
