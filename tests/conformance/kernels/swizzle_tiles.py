"""tl.swizzle2d remaps a linear program id to a grouped (row, column) tile order."""
import triton
import triton.language as tl


@triton.jit
def swizzle_copy_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    pid_m, pid_n = tl.swizzle2d(pid // grid_n, pid % grid_n, grid_m, grid_n, GROUP)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


# tilelens: swizzle_copy_kernel[(cdiv(40, 16) * cdiv(36, 16),)](fp32[40, 36], fp32[40, 36], 40, 36, BM=16, BN=16, GROUP=2)
# tilelens: swizzle_copy_kernel[(4,)](fp32[32, 32], fp32[32, 32], 32, 32, BM=16, BN=16, GROUP=2)
