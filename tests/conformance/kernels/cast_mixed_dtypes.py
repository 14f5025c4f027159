"""Mixed element types: read fp16 and bf16, accumulate in fp32, write fp32 and bf16."""
import triton
import triton.language as tl


@triton.jit
def mixed_kernel(a_ptr, b_ptr, out32_ptr, out16_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = a + b
    tl.store(out32_ptr + offs, s, mask=mask)
    tl.store(out16_ptr + offs, s.to(tl.bfloat16), mask=mask)


# tilelens: mixed_kernel[(cdiv(70, 32),)](fp16[70], bf16[70], fp32[70], bf16[70], 70, BLOCK=32)
# tilelens: mixed_kernel[(1,)](fp16[16], bf16[16], fp32[16], bf16[16], 16, BLOCK=16)
