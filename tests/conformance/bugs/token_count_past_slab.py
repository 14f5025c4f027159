"""Bug: the routed counts may sum to 36 (values=(0, 10), four sources) for slabs of 32 rows: the last
expert may walk past its slab and the storage."""
import triton
import triton.language as tl


@triton.jit
def token_count_loop_kernel(counts_ptr, x_ptr, out_ptr, N_SRC: tl.constexpr, SLAB: tl.constexpr,
                            BLOCK: tl.constexpr):
    e = tl.program_id(0)
    counts = tl.load(counts_ptr + e * N_SRC + tl.arange(0, N_SRC))
    n = tl.sum(counts, axis=0)
    for r in range(0, n, BLOCK):
        rows = r + tl.arange(0, BLOCK)
        m = rows < n
        v = tl.load(x_ptr + e * SLAB + rows, mask=m, other=0.0)
        tl.store(out_ptr + e * SLAB + rows, v * 2.0, mask=m)


# tilelens: token_count_loop_kernel[(4,)](i32[4, 4].values(0, 10), fp32[4 * 32], fp32[4 * 32], N_SRC=4, SLAB=32, BLOCK=16)
# expect: TL002 at line 16
# expect: TL002 at line 17
