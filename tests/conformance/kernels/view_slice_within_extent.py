"""A slice x[:, :48] of a 64-column tensor read with the slice's own width as the mask: every
access stays inside the slice (no TL004), though its rows are 64 apart in the storage."""
import triton
import triton.language as tl


@triton.jit
def row_copy_kernel(x_ptr, y_ptr, stride_x, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * BLOCK + cols, v, mask=cols < n_cols)


# tilelens: row_copy_kernel[(4,)](tensor(fp32, (4, 48), strides=(64, 1), storage=256), fp32[4, 64], 64, 48, BLOCK=64)
