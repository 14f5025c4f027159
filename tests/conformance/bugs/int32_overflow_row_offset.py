"""Bug: `pid * stride` is computed in int32; rows of 2**30 + 64 elements overflow it from row 2 on."""
import triton
import triton.language as tl


@triton.jit
def row_copy_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row_start = pid * stride
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x_ptr + row_start + cols, mask=mask)
    tl.store(y_ptr + row_start + cols, v, mask=mask)


# tilelens: R = 3
# tilelens: C = 2**30 + 64
# tilelens: row_copy_kernel[(R,)](i8[R, C], i8[R, C], C, 64, BLOCK=64)
# expect: TL003 at line 9
