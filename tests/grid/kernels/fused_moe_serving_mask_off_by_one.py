"""Bug: the mask lets the padding id (`num_valid_tokens`) through (`<=`): its row is one past the
activations, and its output row one past the output."""
import triton
import triton.language as tl

# tilelens: T = 4096
# tilelens: TOPK = 2
# tilelens: E = 8
# tilelens: K = 1024
# tilelens: N = 2048
# tilelens: EM = T * TOPK + E * 64
# tilelens: fused_moe_kernel[(EM // 64, N // 64)](fp16[T, K], fp16[E, N, K], fp16[T * TOPK, N], i32[EM].values(0, T * TOPK + 1), i32[EM // 64].values(0, E), N, K, T * TOPK, K, N * K, K, N, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, TOP_K=TOPK)


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
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + offs_bn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=token_mask[:, None] & (offs_bn[None, :] < N))


