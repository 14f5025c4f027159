"""Offsets and the masked load come from helpers in another file: Triton inlines them."""
import triton
import triton.language as tl

from golden_helpers import block_offsets, load_masked

# tilelens: helper_kernel[(cdiv(75, 32),)](fp32[75], fp32[75], 75, BLOCK=32)


@triton.jit
def helper_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = block_offsets(tl.program_id(0), BLOCK)
    x = load_masked(x_ptr, offs, n)
    tl.store(y_ptr + offs, x + 1, mask=offs < n)
