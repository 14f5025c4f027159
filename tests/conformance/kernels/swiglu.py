"""SwiGLU: the gate and the up projection are the two halves of each input row."""
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    gate = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + N + cols, mask=mask, other=0.0).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(y_ptr + row * stride_y + cols, out, mask=mask)


# tilelens: swiglu_kernel[(3, cdiv(40, 32))](fp32[3, 80], fp32[3, 40], 40, 80, 40, BLOCK=32)
# tilelens: swiglu_kernel[(2, 1)](fp16[2, 64], fp32[2, 32], 32, 64, 32, BLOCK=32)
