"""Complex multiply on interleaved (re, im) pairs: even and odd element streams."""
import triton
import triton.language as tl


@triton.jit
def cmul_kernel(a_ptr, b_ptr, c_ptr, n_complex, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n_complex
    ar = tl.load(a_ptr + 2 * i, mask=mask)
    ai = tl.load(a_ptr + 2 * i + 1, mask=mask)
    br = tl.load(b_ptr + 2 * i, mask=mask)
    bi = tl.load(b_ptr + 2 * i + 1, mask=mask)
    tl.store(c_ptr + 2 * i, ar * br - ai * bi, mask=mask)
    tl.store(c_ptr + 2 * i + 1, ar * bi + ai * br, mask=mask)


# tilelens: cmul_kernel[(cdiv(40, 16),)](fp32[80], fp32[80], fp32[80], 40, BLOCK=16)
# tilelens: cmul_kernel[(2,)](fp32[64], tensor(fp32, (64,), strides=(1,), offset=2, storage=66), fp32[64], 32, BLOCK=16)
