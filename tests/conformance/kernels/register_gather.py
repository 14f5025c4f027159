"""`tl.gather` of a register tensor feeding an address: a permutation of computed offsets (exact), and
a table of 16 row offsets loaded from a declared range, spread over 64 lanes (each lane lies in the
hull of the table's values)."""
import triton
import triton.language as tl


@triton.jit
def gather_computed(src_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    doubled = offs * 2
    picked = tl.gather(doubled, (offs * 5) % N, 0)
    x = tl.load(src_ptr + row * 2 * N + picked)
    tl.store(out_ptr + row * N + offs, x)


@triton.jit
def gather_loaded_table(table_ptr, src_ptr, out_ptr, T: tl.constexpr, N: tl.constexpr, W: tl.constexpr):
    row = tl.program_id(0)
    t = tl.arange(0, T)
    table = tl.load(table_ptr + row * T + t)
    offs = tl.arange(0, N)
    picked = tl.gather(table, offs % T, 0)
    x = tl.load(src_ptr + row * W + picked)
    tl.store(out_ptr + row * N + offs, x)


# tilelens: gather_computed[(3,)](fp32[3, 128], fp32[3, 64], N=64)
# tilelens: gather_loaded_table[(3,)](i32[3, 16].values(0, 32), fp32[3, 32], fp32[3, 64], T=16, N=64, W=32)
