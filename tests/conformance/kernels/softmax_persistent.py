"""Persistent softmax: each program strides over rows with tl.range (pid-dependent trip count)."""
import triton
import triton.language as tl


@triton.jit
def softmax_persistent_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                              BLOCK_SIZE: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=2):
        offs = tl.arange(0, BLOCK_SIZE)
        mask = offs < n_cols
        row = tl.load(in_ptr + row_idx * in_stride + offs, mask=mask, other=-float("inf"))
        z = row - tl.max(row, axis=0)
        num = tl.exp(z)
        tl.store(out_ptr + row_idx * out_stride + offs, num / tl.sum(num, axis=0), mask=mask)


# tilelens: R = 11
# tilelens: C = 40
# tilelens: softmax_persistent_kernel[(4,)](fp32[R, C], fp32[R, C], C, C, R, C, BLOCK_SIZE=64)
# tilelens: softmax_persistent_kernel[(3,)](fp32[R, 64], tensor(fp32, (R, C), strides=(48, 1), offset=5, storage=5 + R * 48), 48, 64, R, C, BLOCK_SIZE=64)
