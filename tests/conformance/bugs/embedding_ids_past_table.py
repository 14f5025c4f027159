"""Bug: the ids may name row V (values=(0, V + 1)) of a table with V rows: the gather may read past
the table, with the index value V as the witness."""
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, table_ptr, out_ptr, D: tl.constexpr):
    tok = tl.program_id(0)
    row = tl.load(ids_ptr + tok)
    cols = tl.arange(0, D)
    tl.store(out_ptr + tok * D + cols, tl.load(table_ptr + row * D + cols))


# tilelens: embedding_kernel[(64,)](i32[64].values(0, 1001), fp32[1000, 32], fp32[64, 32], D=32)
# expect: TL002 at line 12
