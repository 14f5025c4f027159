"""Bug: an in-place shift x[i + 1] = x[i] done by blocks: each program stores the first element of
the next program's block, which that program loads: a load/store race between programs."""
import triton
import triton.language as tl


@triton.jit
def shift_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n - 1)
    tl.store(x_ptr + offs + 1, v, mask=offs < n - 1)


# tilelens: shift_kernel[(4,)](fp32[64], 64, BLOCK=16)
# expect: TL005 at line 11
