"""Embedding lookup: each program reads the row named by a token id (indirect access)."""
# expect-refusal: indirect-address  (the address is built from loaded indices)
import triton
import triton.language as tl

TILELENS_ORACLE_FILL = {"ids_ptr": 5}


@triton.jit
def embedding_kernel(ids_ptr, table_ptr, out_ptr, D, BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    idx = tl.load(ids_ptr + tok)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    row = tl.load(table_ptr + idx * D + cols, mask=mask)
    tl.store(out_ptr + tok * D + cols, row, mask=mask)


# tilelens: embedding_kernel[(6,)](i32[6], fp32[5, 24], fp32[6, 24], 24, BLOCK=32)
# tilelens: embedding_kernel[(3,)](i64[3], fp16[8, 16], fp16[3, 16], 16, BLOCK=16)
