"""Flattening a serving batch's token slots: request r copies the first `lens[r]` slots of its row
of the request-to-token table (the row it loads) to `out`, starting at its loaded offset. 4,096
requests of up to 32,768 tokens, in blocks of 512: each program loops over up to 64 blocks, a trip
count from loaded data, so counting the loop once puts the launch well inside the enumeration's
budget and following it does not. Clean: every offset leaves room for a whole row.
"""
import triton
import triton.language as tl

# tilelens: REQS = 4096
# tilelens: POOL = 65536
# tilelens: CTX = 32768
# tilelens: flatten_token_slots[(REQS,)](i32[POOL, CTX], i64[REQS].values(0, POOL), i32[REQS].values(0, CTX + 1), i32[REQS].values(0, REQS * CTX - CTX + 1), i32[REQS * CTX], CTX)
@triton.jit
def flatten_token_slots(table, rows, lens, starts, out, row_stride: tl.constexpr):
    BLOCK: tl.constexpr = 512
    r = tl.program_id(0)
    row = tl.load(rows + r)
    n = tl.load(lens + r)
    start = tl.load(starts + r)
    for b in range(tl.cdiv(n, BLOCK)):
        j = b * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
        keep = j < n
        slot = tl.load(table + row * row_stride + j, mask=keep)
        tl.store(out + start + j, slot, mask=keep)
