"""if/else on a program-uniform condition: full blocks go unmasked, the last program is masked."""
import triton
import triton.language as tl


@triton.jit
def split_tail_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if (pid + 1) * BLOCK <= n:
        v = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, v * 2)
    else:
        v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + offs, v * 2, mask=offs < n)


# tilelens: split_tail_kernel[(cdiv(100, 32),)](fp32[100], fp32[100], 100, BLOCK=32)
# tilelens: split_tail_kernel[(2,)](fp32[64], fp32[64], 64, BLOCK=32)
