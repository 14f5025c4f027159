"""The helpers issue the loads and stores themselves: the accesses lie in helpers/memops.py."""
import triton
import triton.language as tl

from helpers.memops import load_row, store_row


@triton.jit
def helper_rows_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = load_row(x_ptr, row, stride_x, n_cols, BLOCK)
    store_row(y_ptr, row, stride_y, n_cols, x * x, BLOCK)


# tilelens: helper_rows_kernel[(4,)](fp32[4, 30], fp32[4, 30], 30, 30, 30, BLOCK=32)
# tilelens: helper_rows_kernel[(3,)](tensor(fp32, (3, 20), strides=(24, 1), storage=72), fp32[3, 20], 20, 24, 20, BLOCK=32)
