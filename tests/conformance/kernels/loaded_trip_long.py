"""Loops whose trip count is loaded data in a wide declared range (up to 100,000 per program): a `for`
over `range(0, n)` with a second index `j` stepping by one, a `while i < n` stepping by one, a `for`
over `n` blocks whose pointer steps by BLOCK, and a `while` counting to `n` while its pointer steps by
BLOCK. Each index stays below the highest n it may reach, so every access stays in its storage; the
analysis sums the iterations up instead of following 100,000 of them."""
import triton
import triton.language as tl


@triton.jit
def long_trip_for_kernel(cnt_ptr, tab_ptr, out_ptr):
    pid = tl.program_id(0)
    n = tl.load(cnt_ptr + pid)
    acc = 0.0
    j = 0
    for k in range(0, n):
        acc += tl.load(tab_ptr + j)
        j += 1
    tl.store(out_ptr + pid, acc)


@triton.jit
def long_trip_while_kernel(cnt_ptr, tab_ptr, out_ptr):
    pid = tl.program_id(0)
    n = tl.load(cnt_ptr + pid)
    i = 0
    acc = 0.0
    while i < n:
        acc += tl.load(tab_ptr + i)
        i += 1
    tl.store(out_ptr + pid, acc)


@triton.jit
def long_trip_blocks_kernel(cnt_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.load(cnt_ptr + pid)
    p = x_ptr + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, n):
        acc += tl.load(p)
        p += BLOCK
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit
def long_trip_paired_while_kernel(cnt_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.load(cnt_ptr + pid)
    i = 0
    p = x_ptr + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    while i < n:
        acc += tl.load(p)
        i += 1
        p += BLOCK
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


# tilelens: long_trip_for_kernel[(2,)](i32[2].values(0, 100001), fp32[100000], fp32[2])
# tilelens: long_trip_while_kernel[(2,)](i32[2].values(0, 100001), fp32[100000], fp32[2])
# tilelens: long_trip_blocks_kernel[(2,)](i32[2].values(0, 1001), fp32[1000 * 64], fp32[2 * 64], BLOCK=64)
# tilelens: long_trip_paired_while_kernel[(2,)](i32[2].values(0, 1001), fp32[1000 * 64], fp32[2 * 64], BLOCK=64)
# the interpreter fills a declared range from its low end (n = 0, 1 above); these give one program
# the longest loop of its range, 1,000 trips (past the 256 the analysis follows one by one), so the
# interpreter itself walks to the top (at 100,000 trips it would take minutes)
# tilelens: long_trip_for_kernel[(2,)](i32[2].values([0, (1000, 1001)]), fp32[1000], fp32[2])
# tilelens: long_trip_while_kernel[(2,)](i32[2].values([0, (1000, 1001)]), fp32[1000], fp32[2])
# tilelens: long_trip_blocks_kernel[(2,)](i32[2].values([0, (1000, 1001)]), fp32[1000 * 64], fp32[2 * 64], BLOCK=64)
# tilelens: long_trip_paired_while_kernel[(2,)](i32[2].values([0, (1000, 1001)]), fp32[1000 * 64], fp32[2 * 64], BLOCK=64)
