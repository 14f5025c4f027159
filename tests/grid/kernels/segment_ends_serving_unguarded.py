"""Bug twin of `segment_ends_serving.py`: `mask=lengths >= 0` lets an empty first segment through, and
its last value is read one element before its row (before the tensor in row 0)."""

import triton
import triton.language as tl

# tilelens: R = 1048576
# tilelens: last_of_segments[(R,)](fp32[R, 1024], i32[R, 16].values(0, 65), fp32[R, 16], E=16)


@triton.jit
def last_of_segments(src_ptr, lengths_ptr, out_ptr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    ends = tl.cumsum(lengths, 0)
    last = tl.load(src_ptr + row * 1024 + ends - 1, mask=lengths >= 0, other=0.0)
    tl.store(out_ptr + row * E + e, last)
