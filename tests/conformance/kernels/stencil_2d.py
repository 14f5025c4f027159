"""5-point stencil on a 2-D grid of tiles with boundary masks on every neighbour."""
import triton
import triton.language as tl


@triton.jit
def stencil_kernel(u_ptr, v_ptr, H, W, BH: tl.constexpr, BW: tl.constexpr):
    r = tl.program_id(0) * BH + tl.arange(0, BH)[:, None]
    c = tl.program_id(1) * BW + tl.arange(0, BW)[None, :]
    inside = (r < H) & (c < W)
    center = tl.load(u_ptr + r * W + c, mask=inside, other=0.0)
    up = tl.load(u_ptr + (r - 1) * W + c, mask=inside & (r >= 1), other=0.0)
    down = tl.load(u_ptr + (r + 1) * W + c, mask=inside & (r + 1 < H), other=0.0)
    left = tl.load(u_ptr + r * W + c - 1, mask=inside & (c >= 1), other=0.0)
    right = tl.load(u_ptr + r * W + c + 1, mask=inside & (c + 1 < W), other=0.0)
    tl.store(v_ptr + r * W + c, 4 * center - up - down - left - right, mask=inside)


# tilelens: stencil_kernel[(cdiv(20, 16), cdiv(24, 16))](fp32[20, 24], fp32[20, 24], 20, 24, BH=16, BW=16)
# tilelens: stencil_kernel[(2, 1)](fp32[32, 16], fp32[32, 16], 32, 16, BH=16, BW=16)
