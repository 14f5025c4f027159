"""Row-wise dropout with one seed per row loaded from memory (the seed feeds values, not addresses)."""
import triton
import triton.language as tl


@triton.jit
def dropout_rows_kernel(x_ptr, seeds_ptr, out_ptr, n_cols, stride, p, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    seed = tl.load(seeds_ptr + row)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    r = tl.rand(seed, row * n_cols + cols)
    tl.store(out_ptr + row * stride + cols, tl.where(r > p, x / (1 - p), 0.0), mask=mask)


# tilelens: dropout_rows_kernel[(4,)](fp32[4, 50], i32[4], fp32[4, 50], 50, 50, 0.3, BLOCK=64)
# tilelens: dropout_rows_kernel[(2,)](fp32[2, 32], i32[2], fp32[2, 32], 32, 32, 0.5, BLOCK=32)
# tilelens: dropout_rows_kernel[(4,)](tensor(fp32, (4, 50), strides=(64, 1), storage=256), i32[4], tensor(fp32, (4, 50), strides=(64, 1), storage=256), 50, 64, 0.3, BLOCK=64)
