"""Fused Adam update: four parameter-sized streams read and three written, scalar hyper-parameters."""
import triton
import triton.language as tl


@triton.jit
def adam_kernel(p_ptr, g_ptr, m_ptr, v_ptr, n, lr, beta1, beta2, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask)
    m = tl.load(m_ptr + offs, mask=mask)
    v = tl.load(v_ptr + offs, mask=mask)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    p = p - lr * m / (tl.sqrt(v) + eps)
    tl.store(p_ptr + offs, p, mask=mask)
    tl.store(m_ptr + offs, m, mask=mask)
    tl.store(v_ptr + offs, v, mask=mask)


# tilelens: adam_kernel[(cdiv(150, 64),)](fp32[150], fp32[150], fp32[150], fp32[150], 150, 1e-3, 0.9, 0.999, 1e-8, BLOCK=64)
# tilelens: adam_kernel[(1,)](fp32[32], fp32[32], fp32[32], fp32[32], 32, 0.01, 0.9, 0.99, 1e-6, BLOCK=32)
