"""Stream compaction at 2**20 rows: each row's positive values packed to its front at the exclusive
running sum of `(x > 0).to(tl.int32)`, which is at most the row's width less one."""
import triton
import triton.language as tl


@triton.jit
def compact_positive(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    keep = (x > 0).to(tl.int32)
    pos = tl.cumsum(keep, 0) - keep
    tl.store(out_ptr + row * N + pos, x, mask=keep > 0)


# tilelens: compact_positive[(1048576,)](fp32[1048576, 64], fp32[1048576, 64], N=64)
