"""RMSNorm forward (as in production LLM kernels): one row per program, weight broadcast."""
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_stride, y_stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(rstd_ptr + row, rstd)
    tl.store(y_ptr + row * y_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


# tilelens: rms_norm_kernel[(4,)](fp16[4, 96], fp16[96], fp16[4, 96], fp32[4], 96, 96, 96, 1e-6, BLOCK=128)
# tilelens: rms_norm_kernel[(3,)](tensor(fp32, (3, 40), strides=(64, 1), storage=192), fp32[40], fp32[3, 40], fp32[3], 64, 40, 40, 1e-5, BLOCK=64)
