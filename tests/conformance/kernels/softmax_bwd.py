"""Softmax backward: dx = y * (dy - sum(y * dy)) per row, three row streams with their own strides."""
import triton
import triton.language as tl


@triton.jit
def softmax_bwd_kernel(dx_ptr, y_ptr, dy_ptr, stride_dx, stride_y, stride_dy, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_y + cols, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + row * stride_dy + cols, mask=mask, other=0.0)
    dot = tl.sum(y * dy, axis=0)
    tl.store(dx_ptr + row * stride_dx + cols, y * (dy - dot), mask=mask)


# tilelens: softmax_bwd_kernel[(4,)](fp32[4, 50], fp32[4, 50], fp32[4, 50], 50, 50, 50, 50, BLOCK=64)
# tilelens: softmax_bwd_kernel[(3,)](fp32[3, 30], tensor(fp32, (3, 30), strides=(32, 1), storage=96), fp32[3, 40], 30, 32, 40, 30, BLOCK=32)
