"""Nested early returns whose surviving paths carry different values into the join block (block
arguments): programs 0..2 shift by 2 rows, programs 3..5 by 1, programs past 5 return."""
import triton
import triton.language as tl


@triton.jit
def shifted_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    shift = 0
    if pid > 2:
        if pid > 5:
            return
        shift = 1
    else:
        shift = 2
    offs = (pid + shift) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs - shift * BLOCK, v, mask=mask)


# tilelens: shifted_copy_kernel[(10,)](fp32[300], fp32[300], 300, BLOCK=32)
