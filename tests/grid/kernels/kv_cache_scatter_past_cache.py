"""`kv_cache_scatter.py` with a slot mapping declared one slot past the cache: the last slot's block is
one past the last block. Interval arithmetic bounds the store by the last block's last offset, an
address no single slot gives; the witness names the slot that leaves the cache and the element it
writes, the first past the end."""

import triton
import triton.language as tl

# tilelens: T = 8192
# tilelens: H = 8
# tilelens: D = 128
# tilelens: NB = 60000
# tilelens: BS = 16
# tilelens: kv_cache_scatter[(T,)](fp16[T, H, D], fp16[NB, BS, H, D], i64[T].values(-1, NB * BS + 1), H * D, BS * H * D, H * D, HD=H * D, BLOCK_SLOTS=BS, TILE=1024)


@triton.jit
def kv_cache_scatter(key_ptr, cache_ptr, slots_ptr, key_stride, block_stride, slot_stride, HD: tl.constexpr, BLOCK_SLOTS: tl.constexpr, TILE: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slots_ptr + token).to(tl.int64)
    if slot < 0:
        return
    block = slot // BLOCK_SLOTS
    within = slot % BLOCK_SLOTS
    cols = tl.arange(0, TILE)
    keys = tl.load(key_ptr + token * key_stride + cols, mask=cols < HD)
    tl.store(cache_ptr + block * block_stride + within * slot_stride + cols, keys, mask=cols < HD)
