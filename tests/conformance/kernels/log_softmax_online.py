"""Log-softmax over long rows: an online max/sum pass, then a second pass that writes."""
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.full((BLOCK,), -float("inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=-float("inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        s = tl.where(m_new == -float("inf"), 0.0, s)
        m = m_new
    mx = tl.max(m, axis=0)
    lse = mx + tl.log(tl.sum(s * tl.exp(m - mx), axis=0))
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row * stride + cols, x - lse, mask=cols < N)


# tilelens: log_softmax_kernel[(3,)](fp32[3, 100], fp32[3, 100], 100, 100, BLOCK=32)
# tilelens: log_softmax_kernel[(2,)](fp32[2, 64], fp32[2, 64], 64, 64, BLOCK=64)
# tilelens: log_softmax_kernel[(3,)](tensor(fp32, (3, 100), strides=(128, 1), storage=384), tensor(fp32, (3, 100), strides=(128, 1), storage=384), 100, 128, BLOCK=32)
