"""A noinline helper does the accesses: the TTIR keeps a tt.call and a private tt.func."""
import triton
import triton.language as tl

from golden_helpers import scale_block

# tilelens: noinline_kernel[(cdiv(50, 16),)](fp32[50], fp32[50], 50, BLOCK=16)


@triton.jit
def noinline_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    scale_block(x_ptr, y_ptr, tl.program_id(0) * BLOCK, n, BLOCK)
