import triton
import triton.language as tl


@triton.jit
def where_unsigned_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    idx = tl.where(m, offs, -1)  # the tail lanes: -1
    u = idx.to(tl.uint32).to(tl.int64)  # -1 as uint32 is 4294967295
    v = tl.load(x_ptr + u)  # unmasked: the tail lanes read element 4294967295
    tl.store(out_ptr + offs, v, mask=m)


# tilelens: where_unsigned_kernel[(1000000,)](fp32[64000000], fp32[64000000], 63999990, BLOCK=64)
