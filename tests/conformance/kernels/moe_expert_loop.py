"""MoE per-expert loop: expert e walks its rows, between two loaded offsets (declared in [0, T]),
in blocks of BLOCK_M, scaling each row by the expert's weights."""
import triton
import triton.language as tl


@triton.jit
def moe_expert_loop_kernel(expert_offs_ptr, x_ptr, w_ptr, out_ptr, D: tl.constexpr, BLOCK_M: tl.constexpr):
    e = tl.program_id(0)
    expert_start = tl.load(expert_offs_ptr + e)
    expert_end = tl.load(expert_offs_ptr + e + 1)
    cols = tl.arange(0, D)
    w = tl.load(w_ptr + e * D + cols)
    for m0 in range(expert_start, expert_end, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = rows < expert_end
        x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=mask[:, None], other=0.0)
        tl.store(out_ptr + rows[:, None] * D + cols[None, :], x * w[None, :], mask=mask[:, None])


# tilelens: moe_expert_loop_kernel[(4,)](i32[5].values(0, 65), fp32[64, 16], fp32[4, 16], fp32[64, 16], D=16, BLOCK_M=16)
