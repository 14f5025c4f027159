"""Bug: the fused MoE GEMM masks its padded token ids with `<=` instead of `<`: the padding id
(`num_valid_tokens`, 12 here) reads row 6 of a 6-row activation as the K loop advances."""
import triton
import triton.language as tl


@triton.jit
def fused_moe_kernel(
    a_ptr, b_ptr, c_ptr, sorted_token_ids_ptr, expert_ids_ptr, N, K, num_valid_tokens,
    stride_am, stride_be, stride_bn, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TOP_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_token_id = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token <= num_valid_tokens
    offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_token[:, None] // TOP_K * stride_am + offs_k[None, :])
    off_expert = tl.load(expert_ids_ptr + pid_m)
    b_ptrs = b_ptr + off_expert * stride_be + (offs_k[:, None] + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + offs_bn[None, :]
    tl.store(c_ptrs, acc, mask=token_mask[:, None] & (offs_bn[None, :] < N))


# tilelens: fused_moe_kernel[(5, 2)](fp32[6, 24], fp32[3, 8, 24], fp32[12, 8], i32[20].values(0, 13), i32[5].values(0, 3), 8, 24, 12, 24, 192, 24, 8, BLOCK_M=4, BLOCK_N=4, BLOCK_K=8, TOP_K=2)
# expect: TL002 at line 25
# expect: TL002 at line 31
