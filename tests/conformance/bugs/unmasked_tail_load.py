"""Bug: no tail mask, and N is not a multiple of the block: the last program reads past x and y."""
import triton
import triton.language as tl


@triton.jit
def add_nomask_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y, mask=offsets < n_elements)


# tilelens: N = 1000
# tilelens: add_nomask_kernel[(cdiv(N, 256),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=256)
# expect: TL001 at line 9
# expect: TL001 at line 10
