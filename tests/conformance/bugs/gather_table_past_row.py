"""Bug: the table of row offsets declared up to 32 (`values(0, 33)`) for rows of 32: an offset of 32
gathered into any lane reads one past its row, past the tensor in the last row."""
import triton
import triton.language as tl


@triton.jit
def gather_loaded_table(table_ptr, src_ptr, out_ptr, T: tl.constexpr, N: tl.constexpr, W: tl.constexpr):
    row = tl.program_id(0)
    t = tl.arange(0, T)
    table = tl.load(table_ptr + row * T + t)
    offs = tl.arange(0, N)
    picked = tl.gather(table, offs % T, 0)
    x = tl.load(src_ptr + row * W + picked)
    tl.store(out_ptr + row * N + offs, x)


# tilelens: gather_loaded_table[(3,)](i32[3, 16].values(0, 33), fp32[3, 32], fp32[3, 64], T=16, N=64, W=32)
# expect: TL002 at line 14
