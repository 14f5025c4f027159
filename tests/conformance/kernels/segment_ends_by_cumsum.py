"""Each row packs up to 8 segments end to end and keeps the last value of each: the segment ends are
the running sum of the loaded lengths (`tl.cumsum`), read at `end - 1` under `mask=lengths > 0`. A
lane's mask speaks of its own length only; the lengths before it are as declared (never negative),
so the end of a non-empty segment is at least 1. The reversed twin reads the first value of each
segment counted from the row's end; the third reads it at the exclusive sum (`tl.cumsum(lengths) -
lengths`, the start of each segment), which is the terms before a lane, never past 7 × 4 = 28."""
import triton
import triton.language as tl


@triton.jit
def segment_ends_by_cumsum(src_ptr, lengths_ptr, out_ptr, W: tl.constexpr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    ends = tl.cumsum(lengths, 0)
    last = tl.load(src_ptr + row * W + ends - 1, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, last)


@triton.jit
def segment_starts_from_the_end(src_ptr, lengths_ptr, out_ptr, W: tl.constexpr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    tails = tl.cumsum(lengths, 0, reverse=True)
    first = tl.load(src_ptr + row * W + W - tails, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, first)


@triton.jit
def segment_starts_by_exclusive_sum(src_ptr, lengths_ptr, out_ptr, W: tl.constexpr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    row_start = row * W + tl.cumsum(lengths, 0) - lengths  # the exclusive sum, after a start
    first = tl.load(src_ptr + row_start, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, first)


@triton.jit
def segment_ends_of_row_tiles(src_ptr, lengths_ptr, out_ptr, W: tl.constexpr, E: tl.constexpr, R: tl.constexpr):
    """Four rows at once: the running sum along axis 1 of a [4, 8] tile of lengths."""
    rows = tl.program_id(0) * R + tl.arange(0, R)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + rows[:, None] * E + e[None, :])
    ends = tl.cumsum(lengths, 1)
    last = tl.load(src_ptr + rows[:, None] * W + ends - 1, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + rows[:, None] * E + e[None, :], last)


# tilelens: segment_ends_by_cumsum[(3,)](fp32[3, 32], i32[3, 8].values(0, 5), fp32[3, 8], W=32, E=8)
# tilelens: segment_starts_from_the_end[(3,)](fp32[3, 32], i32[3, 8].values(0, 5), fp32[3, 8], W=32, E=8)
# tilelens: segment_starts_by_exclusive_sum[(3,)](fp32[3, 32], i32[3, 8].values(0, 5), fp32[3, 8], W=32, E=8)
# tilelens: segment_ends_of_row_tiles[(2,)](fp32[8, 32], i32[8, 8].values(0, 5), fp32[8, 8], W=32, E=8, R=4)
