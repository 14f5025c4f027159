"""Bug: the kernel reads BLOCK columns of a slice x[:, :48] of a 64-column tensor, masked by the
parent's width instead of the slice's: columns 48..63 belong to the parent, inside its storage (no
sanitizer sees it) but outside the slice."""
import triton
import triton.language as tl


@triton.jit
def row_copy_kernel(x_ptr, y_ptr, stride_x, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * BLOCK + cols, v)


# tilelens: row_copy_kernel[(4,)](tensor(fp32, (4, 48), strides=(64, 1), storage=256), fp32[4, 64], 64, 64, BLOCK=64)
# expect: TL004 at line 12
