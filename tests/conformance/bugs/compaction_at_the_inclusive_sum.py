"""Bug: the kept values packed at `tl.cumsum(keep)` (one past each value's place) for the exclusive
sum `tl.cumsum(keep) - keep`: a row whose values are all kept writes one past its end, past the
tensor in the last row."""
import triton
import triton.language as tl


@triton.jit
def compact_positive(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    keep = (x > 0).to(tl.int32)
    tl.store(out_ptr + row * N + tl.cumsum(keep, 0), x, mask=keep > 0)


# tilelens: compact_positive[(4,)](fp32[4, 64], fp32[4, 64], N=64)
# expect: TL002 at line 14
