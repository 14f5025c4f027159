"""Each program reduces its block and adds the partial sum into one scalar with atomic_add."""
import triton
import triton.language as tl


@triton.jit
def block_total_kernel(x_ptr, total_ptr, count_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))
    tl.atomic_add(count_ptr + tl.program_id(0) % 2, 1)


# tilelens: block_total_kernel[(4,)](fp32[120], fp32[1], i32[2], 120, BLOCK=32)
# tilelens: block_total_kernel[(3,)](fp32[48], fp32[1], i32[2], 48, BLOCK=16)
