"""Grid-stride loop written as a `while` loop (scf.while): each program strides by the grid size."""
import triton
import triton.language as tl


@triton.jit
def grid_stride_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    step = tl.num_programs(0) * BLOCK
    while start < n:
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.5, mask=mask)
        start += step


# tilelens: grid_stride_kernel[(3,)](fp32[200], fp32[200], 200, BLOCK=32)
# tilelens: grid_stride_kernel[(2,)](fp32[40], fp32[40], 40, BLOCK=16)
