"""Index math in narrow integer types: int16 lane offsets widened before use as addresses."""
import triton
import triton.language as tl


@triton.jit
def int16_index_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    lane = tl.arange(0, BLOCK).to(tl.int16)
    base = (tl.program_id(0) * BLOCK).to(tl.int16)
    offs16 = base + lane
    offs = offs16.to(tl.int32)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs16, v + 1, mask=mask)


# tilelens: int16_index_kernel[(cdiv(100, 32),)](fp32[100], fp32[100], 100, BLOCK=32)
# tilelens: int16_index_kernel[(2,)](i16[60], i16[60], 60, BLOCK=32)
