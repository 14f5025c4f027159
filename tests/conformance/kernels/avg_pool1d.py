"""1-D average pooling with window and stride: overlapping input windows per output element."""
import triton
import triton.language as tl


@triton.jit
def avg_pool_kernel(x_ptr, y_ptr, L_in, L_out, WINDOW: tl.constexpr, STRIDE: tl.constexpr,
                    BLOCK: tl.constexpr):
    ch = tl.program_id(1)
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    omask = o < L_out
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for w in tl.static_range(WINDOW):
        acc += tl.load(x_ptr + ch * L_in + o * STRIDE + w, mask=omask, other=0.0)
    tl.store(y_ptr + ch * L_out + o, acc / WINDOW, mask=omask)


# tilelens: avg_pool_kernel[(cdiv(19, 16), 2)](fp32[2, 40], fp32[2, 19], 40, 19, WINDOW=4, STRIDE=2, BLOCK=16)
# tilelens: avg_pool_kernel[(1, 3)](fp32[3, 30], fp32[3, 10], 30, 10, WINDOW=3, STRIDE=3, BLOCK=16)
