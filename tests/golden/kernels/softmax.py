"""Row-wise softmax: one program per row, reductions through Triton's own combine functions."""
import triton
import triton.language as tl

# tilelens: softmax_kernel[(64,)](fp32[64, 100], fp32[64, 100], 100, 100, 100, BLOCK_SIZE=128)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)
