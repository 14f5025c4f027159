"""Index-driven scatter-add with atomics (indirect store addresses)."""
# expect-refusal: indirect-address  (the address is built from loaded indices)
import triton
import triton.language as tl

TILELENS_ORACLE_FILL = {"idx_ptr": 6}


@triton.jit
def scatter_add_kernel(src_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src_ptr + offs, mask=mask, other=0.0)
    dst = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.atomic_add(out_ptr + dst, v, mask=mask)


# tilelens: scatter_add_kernel[(cdiv(50, 16),)](fp32[50], i32[50], fp32[6], 50, BLOCK=16)
# tilelens: scatter_add_kernel[(1,)](fp32[10], i32[10], fp32[8], 10, BLOCK=16)
