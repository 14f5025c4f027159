"""Bug: FlagGems' single-pass `masked_select` with the kept values at the inclusive running sum of
the mask (the `- 1` left out): the last kept value of a full block lands one past the output."""
import triton
import triton.language as tl


@triton.jit
def masked_select(inp_ptr, mask_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inp = tl.load(inp_ptr + offsets, mask=offsets < N)
    mask = tl.load(mask_ptr + offsets, mask=offsets < N).to(tl.int1)
    out_offsets = tl.cumsum(mask.to(tl.int32), axis=0)
    tl.store(out_ptr + out_offsets, inp, mask=(offsets < N) & mask)


# tilelens: masked_select[(1,)](fp32[100], i1[100], fp32[100], 100, BLOCK=128)
# expect: TL002 at line 13
