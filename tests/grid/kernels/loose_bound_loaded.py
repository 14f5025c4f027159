"""A bound the grid engine cannot make tight, on a launch that leaves the affine summary (a loaded
base): `pid % 4 + (pid + 1) % 4` reaches 5 at most, but as two intervals it is bounded by 6, one past
the storage. No program reads element 6: the enumeration shows it clean."""
import triton
import triton.language as tl


@triton.jit
def loose_loaded(x_ptr, y_ptr, base_ptr):
    pid = tl.program_id(0)
    base = tl.load(base_ptr)
    i = base + pid % 4 + (pid + 1) % 4
    tl.store(y_ptr + pid, tl.load(x_ptr + i))


# tilelens: loose_loaded[(8,)](fp32[6], fp32[8], i32[1].values(0, 1))
