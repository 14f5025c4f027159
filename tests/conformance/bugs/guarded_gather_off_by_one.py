"""Bug: the guard admits idx == n_table (`<=` for `<`): the gather may read the row past the table,
with the index value 64 as the witness."""
import triton
import triton.language as tl


@triton.jit
def guarded_gather_kernel(idx_ptr, table_ptr, out_ptr, n_idx, n_table, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_idx
    idx = tl.load(idx_ptr + offs, mask=m, other=0)
    valid = m & (idx >= 0) & (idx <= n_table)
    v = tl.load(table_ptr + idx, mask=valid, other=0.0)
    tl.store(out_ptr + offs, v, mask=m)


# tilelens: guarded_gather_kernel[(4,)](i32[100].values(-8, 72), fp32[64], fp32[100], 100, 64, BLOCK=32)
# expect: TL002 at line 14
