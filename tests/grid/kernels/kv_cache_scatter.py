"""Writes each token's keys into a paged cache at the slot a loaded mapping gives (-1: a padding
token, skipped), the way serving engines fill their KV cache: 8,192 tokens in flight, 8 heads of 128,
60,000 blocks of 16 slots. The slot mapping's values are declared; the stores' addresses come from
them, so which tokens share a slot depends on the data."""

import triton
import triton.language as tl

# tilelens: T = 8192
# tilelens: H = 8
# tilelens: D = 128
# tilelens: NB = 60000
# tilelens: BS = 16
# tilelens: kv_cache_scatter[(T,)](fp16[T, H, D], fp16[NB, BS, H, D], i64[T].values(-1, NB * BS), H * D, BS * H * D, H * D, HD=H * D, BLOCK_SLOTS=BS, TILE=1024)


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
