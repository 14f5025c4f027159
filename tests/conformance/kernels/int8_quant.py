"""Per-row symmetric int8 quantization: absmax, scale, rounded int8 output and fp32 scale."""
import triton
import triton.language as tl


@triton.jit
def quant_rows_kernel(x_ptr, q_ptr, scale_ptr, N, stride_x, stride_q, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-6)
    scale = amax / 127.0
    q = (x / scale).to(tl.int32)
    q = tl.minimum(tl.maximum(q, -127), 127).to(tl.int8)
    tl.store(q_ptr + row * stride_q + cols, q, mask=mask)
    tl.store(scale_ptr + row, scale)


# tilelens: quant_rows_kernel[(5,)](fp16[5, 48], i8[5, 48], fp32[5], 48, 48, 48, BLOCK=64)
# tilelens: quant_rows_kernel[(2,)](fp32[2, 64], i8[2, 64], fp32[2], 64, 64, 64, BLOCK=64)
# tilelens: quant_rows_kernel[(5,)](tensor(fp16, (5, 48), strides=(64, 1), storage=320), tensor(i8, (5, 48), strides=(64, 1), storage=320), fp32[5], 48, 64, 64, BLOCK=64)
