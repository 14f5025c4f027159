"""Depthwise 1-D convolution: shifted loads with masks on both ends (offs - k >= 0, < L)."""
import triton
import triton.language as tl


@triton.jit
def conv1d_dw_kernel(x_ptr, w_ptr, y_ptr, L, KSIZE: tl.constexpr, BLOCK: tl.constexpr):
    ch = tl.program_id(1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in tl.static_range(KSIZE):
        src = offs - k
        x = tl.load(x_ptr + ch * L + src, mask=(src >= 0) & (src < L), other=0.0)
        w = tl.load(w_ptr + ch * KSIZE + k)
        acc += x * w
    tl.store(y_ptr + ch * L + offs, acc, mask=offs < L)


# tilelens: conv1d_dw_kernel[(cdiv(40, 16), 3)](fp32[3, 40], fp32[3, 4], fp32[3, 40], 40, KSIZE=4, BLOCK=16)
# tilelens: conv1d_dw_kernel[(2, 2)](fp32[2, 32], fp32[2, 3], fp32[2, 32], 32, KSIZE=3, BLOCK=16)
