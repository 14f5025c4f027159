"""Dequantize fp8 (e4m3 and e5m2) blocks with one fp32 scale per block."""
import triton
import triton.language as tl


@triton.jit
def dequant_kernel(q_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(q_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + pid)
    tl.store(out_ptr + offs, q * s, mask=mask)


# tilelens: dequant_kernel[(cdiv(90, 32),)](fp8e4nv[90], fp32[3], fp32[90], 90, BLOCK=32)
# tilelens: dequant_kernel[(2,)](fp8e5[64], fp32[2], fp16[64], 64, BLOCK=32)
