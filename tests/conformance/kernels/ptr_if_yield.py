"""A pointer yielded by an `scf.if` whose branches also store (so it is not folded to a select):
programs below `split` work in `a`, the rest in `b`."""
import triton
import triton.language as tl


@triton.jit
def split_buffers_kernel(a_ptr, b_ptr, log_ptr, split, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid < split:
        tl.store(log_ptr + pid, 0)
        base = a_ptr + pid * BLOCK
    else:
        tl.store(log_ptr + pid, 1)
        base = b_ptr + (pid - split) * BLOCK
    cols = tl.arange(0, BLOCK)
    tl.store(base + cols, tl.full([BLOCK], 1.0, tl.float32), mask=cols < n)


# tilelens: split_buffers_kernel[(5,)](fp32[64], fp32[96], i32[5], 2, 30, BLOCK=32)
