"""Bug: an in-place update where each program also reads the middle element of the next program's
block, which that program overwrites: whether it sees the old or the new value depends on which
program runs first."""
import triton
import triton.language as tl


@triton.jit
def smooth_kernel(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    nxt = tl.load(x_ptr + (pid + 1) * BLOCK + BLOCK // 2)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + nxt)


# tilelens: smooth_kernel[(4,)](fp32[80], BLOCK=16)
# expect: TL005 at line 13
