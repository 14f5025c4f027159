"""Bug: each segment reads one value per step of 16 from its start to its end, and the offsets may
reach 60 (values=(0, 61)) for a table of 59 values: the last step of a long segment may read past
it. (The step lattice does not reach the last value: the loop's last start must still be bounded by
the highest end, not by a whole step below it.)"""
import triton
import triton.language as tl


@triton.jit
def segment_heads_kernel(cu_ptr, x_ptr, out_ptr):
    seg = tl.program_id(0)
    start = tl.load(cu_ptr + seg)
    end = tl.load(cu_ptr + seg + 1)
    acc = 0.0
    for t in range(start, end, 16):
        acc += tl.load(x_ptr + t)
    tl.store(out_ptr + seg, acc)


# tilelens: segment_heads_kernel[(4,)](i32[5].values(0, 61), fp32[59], fp32[4])
# expect: TL002 at line 16
