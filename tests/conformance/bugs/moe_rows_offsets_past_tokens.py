"""Bug: the expert offsets may reach T + 1 (values=(0, T + 2)) for T token rows: a row past the last
token may be read and written."""
import triton
import triton.language as tl


@triton.jit
def moe_rows_kernel(expert_offs_ptr, x_ptr, w_ptr, out_ptr, D: tl.constexpr, BLOCK_M: tl.constexpr):
    e = tl.program_id(0)
    mblk = tl.program_id(1)
    expert_start = tl.load(expert_offs_ptr + e)
    expert_end = tl.load(expert_offs_ptr + e + 1)
    row_offs = expert_start + mblk * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = row_offs < expert_end
    cols = tl.arange(0, D)
    x = tl.load(x_ptr + row_offs[:, None] * D + cols[None, :], mask=mask[:, None], other=0.0)
    w = tl.load(w_ptr + e * D + cols)
    tl.store(out_ptr + row_offs[:, None] * D + cols[None, :], x * w[None, :], mask=mask[:, None])


# tilelens: moe_rows_kernel[(4, 4)](i32[5].values(0, 66), fp32[64, 16], fp32[4, 16], fp32[64, 16], D=16, BLOCK_M=16)
# expect: TL002 at line 16
# expect: TL002 at line 18
