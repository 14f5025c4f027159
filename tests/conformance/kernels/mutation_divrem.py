"""Conformance-style kernels for survivors of tools/mutation/mutate.py: half_pixel_kernel catches
divsi-floor, phase_kernel catches remsi-python-sign. Both agree with the interpreter on the current product.
"""
import triton
import triton.language as tl


@triton.jit
def half_pixel_kernel(x_ptr, y_ptr, n_out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_out
    src = (offs - 1) // 2          # C division truncates: lane 0 reads element 0, never -1
    tl.store(y_ptr + offs, tl.load(x_ptr + src, mask=mask), mask=mask)


@triton.jit
def phase_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    phase = (offs - 3) % 4         # C remainder takes the dividend's sign: -3..3
    tl.store(y_ptr + offs, tl.load(x_ptr + 3 + phase, mask=mask), mask=mask)


# tilelens: half_pixel_kernel[(cdiv(40, 16),)](fp32[20], fp32[40], 40, BLOCK=16)
# tilelens: phase_kernel[(2,)](fp32[8], fp32[32], 32, BLOCK=16)
