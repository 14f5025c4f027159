"""A constexpr flag selects reversed addressing (N - 1 - i) at compile time."""
import triton
import triton.language as tl


@triton.jit
def maybe_reverse_kernel(x_ptr, y_ptr, N, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    if REVERSE:
        src = N - 1 - offs
    else:
        src = offs
    v = tl.load(x_ptr + src, mask=mask)
    tl.store(y_ptr + offs, v, mask=mask)


# tilelens: maybe_reverse_kernel[(cdiv(50, 16),)](fp32[50], fp32[50], 50, REVERSE=True, BLOCK=16)
# tilelens: maybe_reverse_kernel[(cdiv(50, 16),)](fp32[50], fp32[50], 50, REVERSE=False, BLOCK=16)
# tilelens: maybe_reverse_kernel[(1,)](fp32[32], fp32[40], 32, REVERSE=True, BLOCK=64)
