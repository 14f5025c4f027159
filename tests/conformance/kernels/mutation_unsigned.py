"""Conformance-style kernels for survivors of tools/mutation/mutate.py: window_kernel catches
cmpi-unsigned-as-signed, ring_u8_kernel extui-as-extsi, ring_i8_kernel trunci-no-wrap, bucket_u32_kernel
divui-signed and shrui-arithmetic, hash_subsample_kernel wraparound-removed; scalar_bias_kernel makes
splat-not-materialized crash (a TL050 refusal, caught only once refusals are pinned); prev_clamped_kernel
shows that no extsi of an i1 is emitted. All agree with the interpreter on the current product.
"""
import triton
import triton.language as tl


@triton.jit
def window_kernel(x_ptr, y_ptr, start, length, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rel = (offs - start).to(tl.uint32, bitcast=True)
    inside = rel < length                      # one unsigned compare: start <= offs < start + length
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=inside), mask=inside)


@triton.jit
def ring_u8_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    slot = offs.to(tl.uint8)                   # a ring of 256 slots: wraps mod 256, zero-extends
    tl.store(y_ptr + offs, tl.load(x_ptr + slot))


@triton.jit
def bucket_u32_kernel(x_ptr, y_ptr, base, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    key = (offs - base).to(tl.uint32, bitcast=True)   # lanes below `base` wrap to >= 2**31
    hi = key >> 28                             # logical shift: 0..15
    mid = (key // 65536) % 16                  # unsigned division
    tl.store(y_ptr + offs, tl.load(x_ptr + hi) + tl.load(x_ptr + 16 + mid))


@triton.jit
def hash_subsample_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = offs * -1640531535                     # Fibonacci hash, wraps in int32
    keep = (h >= 0) & (offs < n)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=keep), mask=keep)


@triton.jit
def prev_clamped_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = offs + tl.where(offs > 0, -1, 0)     # previous element, clamped at 0
    tl.store(y_ptr + offs, tl.load(x_ptr + src, mask=mask), mask=mask)


@triton.jit
def ring_i8_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    slot = offs.to(tl.int8)                    # wraps to -128..127
    tl.store(y_ptr + offs, tl.load(x_ptr + 128 + slot))


@triton.jit
def scalar_bias_kernel(x_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bias = tl.load(b_ptr + offs * 0, mask=mask)  # one element broadcast to every live lane
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + bias, mask=mask)


# tilelens: ring_i8_kernel[(2,)](fp32[256], fp32[256], BLOCK=128)
# tilelens: scalar_bias_kernel[(cdiv(40, 16),)](fp32[40], fp32[1], fp32[40], 40, BLOCK=16)
# tilelens: window_kernel[(4,)](fp32[64], fp32[64], 10, 20, BLOCK=16)
# tilelens: ring_u8_kernel[(4,)](fp32[256], fp32[512], BLOCK=128)
# tilelens: bucket_u32_kernel[(2,)](fp32[32], fp32[64], 16, BLOCK=32)
# tilelens: hash_subsample_kernel[(4,)](fp32[64], fp32[64], 60, BLOCK=16)
# tilelens: prev_clamped_kernel[(cdiv(40, 16),)](fp32[40], fp32[40], 40, BLOCK=16)
