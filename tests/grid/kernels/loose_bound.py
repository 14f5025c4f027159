"""A bound the grid engine cannot make tight: `pid % 4 + (pid + 1) % 4` reaches 5 at most (never 6),
but as two intervals it is bounded by 6, one past the storage. No program reads element 6: the
bound must stay a possible out-of-bounds (TL002), never a definite one."""
import triton
import triton.language as tl


@triton.jit
def loose(x_ptr, y_ptr):
    pid = tl.program_id(0)
    i = pid % 4 + (pid + 1) % 4
    tl.store(y_ptr + pid, tl.load(x_ptr + i))


# tilelens: loose[(8,)](fp32[6], fp32[8])
