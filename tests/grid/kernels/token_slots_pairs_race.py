"""token_slots_serving.py with two requests per output row (`r // 2`): requests 2k and 2k + 1 both
store their length at the row's entry of `row_lens` without an atomic, a race the enumeration shows in the
first programs it visits, before its budget stops it. The grid engine, standing in for the rest,
cannot show it (its footprints are bounds), so the enumeration's verdict stands: a TL005, and the
refusal that says where it stopped.
"""
import triton
import triton.language as tl

# tilelens: REQS = 4096
# tilelens: POOL = 65536
# tilelens: CTX = 32768
# tilelens: pair_token_slots[(REQS,)](i32[POOL, CTX], i64[REQS].values(0, POOL), i32[REQS].values(0, CTX + 1), i32[REQS // 2 * CTX], i32[REQS // 2], CTX)
@triton.jit
def pair_token_slots(table, rows, lens, out, row_lens, row_stride: tl.constexpr):
    BLOCK: tl.constexpr = 512
    r = tl.program_id(0)
    row = tl.load(rows + r)
    n = tl.load(lens + r)
    tl.store(row_lens + r // 2, n)  # the row's length, written by both requests of the pair
    for b in range(tl.cdiv(n, BLOCK)):
        j = b * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
        keep = j < n
        slot = tl.load(table + row * row_stride + j, mask=keep)
        tl.store(out + (r // 2) * row_stride + j, slot, mask=keep)
