"""Copy new keys into a paged-style cache: token t of sequence b goes to slot (b, start + t)."""
import triton
import triton.language as tl


@triton.jit
def kv_copy_kernel(k_ptr, cache_ptr, start, stride_kb, stride_kt, stride_cb, stride_ct,
                   HEAD: tl.constexpr):
    b = tl.program_id(0)
    t = tl.program_id(1)
    d = tl.arange(0, HEAD)
    v = tl.load(k_ptr + b * stride_kb + t * stride_kt + d)
    tl.store(cache_ptr + b * stride_cb + (start + t) * stride_ct + d, v)


# tilelens: kv_copy_kernel[(2, 3)](fp16[2, 3, 16], fp16[2, 10, 16], 4, 48, 16, 160, 16, HEAD=16)
# tilelens: kv_copy_kernel[(3, 5)](fp32[3, 5, 32], fp32[3, 8, 32], 3, 160, 32, 256, 32, HEAD=32)
