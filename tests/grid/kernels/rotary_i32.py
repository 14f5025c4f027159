"""Rotary embedding forward, one program per token over 10^6 tokens (32 heads x 128): the token's row
offset `pid * row_stride` and the batch offset `b * batch_stride` are computed in int32 and pass 2**31."""
import triton
import triton.language as tl


@triton.jit
def rotary_fwd(x_ptr, cos_ptr, sin_ptr, out_ptr, seq_len, row_stride, batch_stride,
               HEADS: tl.constexpr, HALF: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // seq_len
    s = pid % seq_len
    h = tl.arange(0, HEADS)[:, None]
    d = tl.arange(0, HALF)[None, :]
    src = x_ptr + pid * row_stride + h * (2 * HALF) + d
    x1 = tl.load(src)
    x2 = tl.load(src + HALF)
    c = tl.load(cos_ptr + s * HALF + d)
    sn = tl.load(sin_ptr + s * HALF + d)
    dst = out_ptr + b * batch_stride + s * row_stride + h * (2 * HALF) + d
    tl.store(dst, x1 * c - x2 * sn)
    tl.store(dst + HALF, x1 * sn + x2 * c)


# tilelens: rotary_fwd[(1000000,)](fp16[1000000, 32, 128], fp32[250000, 64], fp32[250000, 64], fp16[1000000, 32, 128], 250000, 4096, 1024000000, HEADS=32, HALF=64)
