"""Bug: the column mask uses the leading dimension instead of the row length, so the last row of a
padded view reads past the end of its storage."""
import triton
import triton.language as tl


@triton.jit
def padded_rows_kernel(x_ptr, y_ptr, N, ld, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * ld + cols, mask=cols < ld)
    tl.store(y_ptr + row * N + cols, v, mask=cols < N)


# tilelens: padded_rows_kernel[(4,)](tensor(fp32, (4, 32), strides=(40, 1), offset=8, storage=8 + 3 * 40 + 32), fp32[4, 32], 32, 40, BLOCK=64)
# expect: TL001 at line 11
