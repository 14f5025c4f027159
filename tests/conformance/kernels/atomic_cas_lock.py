"""A spin lock (atomic_cas / atomic_xchg) guarding a read-modify-write of a shared row."""
import triton
import triton.language as tl


@triton.jit
def locked_accumulate_kernel(x_ptr, acc_ptr, lock_ptr, N, NLOCKS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    slot = pid % NLOCKS
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + pid * N + cols, mask=mask, other=0.0)
    while tl.atomic_cas(lock_ptr + slot, 0, 1) == 1:
        pass
    cur = tl.load(acc_ptr + slot * N + cols, mask=mask, other=0.0)
    tl.store(acc_ptr + slot * N + cols, cur + x, mask=mask)
    tl.atomic_xchg(lock_ptr + slot, 0)


# tilelens: locked_accumulate_kernel[(5,)](fp32[5, 24], fp32[2, 24], i32[2], 24, NLOCKS=2, BLOCK=32)
# tilelens: locked_accumulate_kernel[(4,)](fp32[4, 16], fp32[4, 16], i32[4], 16, NLOCKS=4, BLOCK=16)
