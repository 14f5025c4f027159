"""A dtype-valued constexpr that changes the accesses: the tile width is 512 bytes of OUT_DTYPE, and an fp16
output packs two elements per fp32 slot of the scratch row (vLLM's `compute_type`, Liger's `dtype=`)."""
import triton
import triton.language as tl


@triton.jit
def dtype_tile_kernel(x_ptr, out_ptr, n, OUT_DTYPE: tl.constexpr):
    BLOCK: tl.constexpr = 4096 // OUT_DTYPE.primitive_bitwidth
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if OUT_DTYPE == tl.float16:
        tl.store(out_ptr + offs // 2, x.to(OUT_DTYPE), mask=mask & (offs % 2 == 0))
    else:
        tl.store(out_ptr + offs, x.to(OUT_DTYPE), mask=mask)


# tilelens: dtype_tile_kernel[(cdiv(300, 128),)](fp32[300], fp32[300], 300, OUT_DTYPE=fp32)
# tilelens: dtype_tile_kernel[(cdiv(300, 256),)](fp32[300], fp16[150], 300, OUT_DTYPE=tl.float16)
# tilelens: dtype_tile_kernel[(cdiv(300, 256),)](fp32[300], bf16[300], 300, triton.language.bfloat16)
