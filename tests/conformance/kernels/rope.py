"""Rotary position embedding: rotate the two halves of each head with cos/sin tables per position."""
import triton
import triton.language as tl


@triton.jit
def rope_kernel(q_ptr, cos_ptr, sin_ptr, out_ptr, seq_len, n_heads, stride_s, stride_h,
                HALF: tl.constexpr):
    pos = tl.program_id(0)
    head = tl.program_id(1)
    d = tl.arange(0, HALF)
    base = pos * stride_s + head * stride_h
    x1 = tl.load(q_ptr + base + d)
    x2 = tl.load(q_ptr + base + HALF + d)
    c = tl.load(cos_ptr + pos * HALF + d)
    s = tl.load(sin_ptr + pos * HALF + d)
    tl.store(out_ptr + base + d, x1 * c - x2 * s)
    tl.store(out_ptr + base + HALF + d, x1 * s + x2 * c)


# tilelens: rope_kernel[(5, 2)](fp32[5, 2, 32], fp32[5, 16], fp32[5, 16], fp32[5, 2, 32], 5, 2, 64, 32, HALF=16)
# tilelens: rope_kernel[(3, 4)](tensor(fp32, (3, 4, 32), strides=(256, 64, 1), storage=768), fp32[3, 16], fp32[3, 16],
# tilelens:     tensor(fp32, (3, 4, 32), strides=(256, 64, 1), storage=768), 3, 4, 256, 64, HALF=16)
