"""An early `return` on a program-uniform condition (Triton lowers it to `cf.cond_br` between
blocks): programs past the data return before touching memory, the rest load and store masked."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, v + 1, mask=mask)


# tilelens: add_one_kernel[(8,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
# tilelens: add_one_kernel[(3,)](fp32[512], fp32[512], 512, BLOCK=256)
