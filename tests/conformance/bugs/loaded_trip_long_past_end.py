"""Bug: the trip counts of the long loops may reach one past their storage (values=(0, 100002) for
a table of 100,000 elements, (0, 1002) blocks for 1,000): the last iteration reads one element, or one
block, past the end (the paired while loop's pointer too). The analysis sums the 100,000 iterations
up and warns (TL002: the data decides)."""
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


# tilelens: long_trip_for_kernel[(2,)](i32[2].values(0, 100002), fp32[100000], fp32[2])
# tilelens: long_trip_while_kernel[(2,)](i32[2].values(0, 100002), fp32[100000], fp32[2])
# tilelens: long_trip_blocks_kernel[(2,)](i32[2].values(0, 1002), fp32[1000 * 64], fp32[2 * 64], BLOCK=64)
# tilelens: long_trip_paired_while_kernel[(2,)](i32[2].values(0, 1002), fp32[1000 * 64], fp32[2 * 64], BLOCK=64)
# expect: TL002 at line 16
# expect: TL002 at line 28
# expect: TL002 at line 40
# expect: TL002 at line 53
