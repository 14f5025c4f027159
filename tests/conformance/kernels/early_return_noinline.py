"""A noinline helper that returns early with a value (blocks inside a called function), and a
caller that returns early on that value."""
import triton
import triton.language as tl


@triton.jit(noinline=True)
def bump_block(x_ptr, pid, n, BLOCK: tl.constexpr):
    if pid * BLOCK >= n:
        return 0
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)
    return 1


@triton.jit
def bump_then_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    done = bump_block(x_ptr, pid, n, BLOCK)
    if done == 0:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


# tilelens: bump_then_copy_kernel[(6,)](fp32[300], fp32[300], 300, BLOCK=64)
