"""Row offsets promoted to 64 bits with `.to(tl.int64)` before multiplying by the stride."""
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = row * stride
    x = tl.load(x_ptr + base + cols, mask=mask)
    tl.store(y_ptr + base + cols, x * 3, mask=mask)


# tilelens: row_scale_kernel[(6,)](fp32[6, 50], fp32[6, 50], 50, 50, BLOCK=64)
# tilelens: row_scale_kernel[(3,)](fp32[3, 32], fp32[3, 32], i64(32), 32, BLOCK=32)
# tilelens: row_scale_kernel[(4,)](tensor(fp32, (4, 40), strides=(64, 1), storage=256), tensor(fp32, (4, 40), strides=(64, 1), storage=256), 64, 40, BLOCK=64)
