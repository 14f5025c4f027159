"""What a while loop's condition depends on, and whether a followed while loop came back to a state.

`condition_slice` reads one `scf.while` op: the carried values its condition depends on (through the
do-region's updates, to a fixed point), the ops on that path (whose integer wrap the enumeration
watches) and whether that path is pure integer arithmetic (no load, no call, nothing the model reads
from memory). When it is, the carried values on the path and the set of programs still running decide
every later iteration's condition, so the loop coming back to a state it was in proves it never ends.
`Cycle` finds such a return exactly (Brent's method: arrays compared element by element, never hashes,
one snapshot kept), within a small multiple of the iterations before the cycle plus its length.

It decides nothing else: a loop that neither repeats nor wraps is followed up to its limit, and a
path that reads memory is never called periodic (the data may change under it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilelens_lsp.engines import accounting
from tilelens_lsp.ttir.reader import Op

# ops whose results are a function of their operands alone (nested regions are followed through)
PURE_PREFIXES = ("arith.",)
PURE_OPS = frozenset(
    {
        "scf.if",
        "scf.yield",
        "scf.for",
        "tt.splat",
        "tt.broadcast",
        "tt.expand_dims",
        "tt.reshape",
        "tt.trans",
        "tt.make_range",
        "tt.get_program_id",
        "tt.get_num_programs",
        "tt.reduce",
        "tt.reduce.return",
    }
)
UNSIGNED = ("ult", "ule", "ugt", "uge")


@dataclass(frozen=True)
class LoopSlice:
    """The part of a while loop its condition depends on: `ops` (ids, nested ops included), `carried`
    (positions among the carried values), `pure` (only ops of `PURE_OPS`/`PURE_PREFIXES` on it) and
    `signed` (no unsigned comparison on it, so leaving the signed range of the width is a wrap)."""

    ops: frozenset[int]
    carried: tuple[int, ...]
    pure: bool
    signed: bool


def _pure(op: Op) -> bool:
    return op.name.startswith(PURE_PREFIXES) or op.name in PURE_OPS


def condition_slice(op: Op, names: list[str]) -> LoopSlice:
    """The slice of `op`'s condition; `names` are its before-region's arguments (the carried values).
    A loop of another shape than before-region ending in `scf.condition` and a do-region yielding one
    value per carried one gives an empty, impure slice (nothing is watched)."""
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    term = before.ops[-1] if before.ops else None
    yields = after.ops[-1].operands if after.ops and after.ops[-1].name == "scf.yield" else []
    if term is None or term.name != "scf.condition" or len(yields) != len(names):
        return LoopSlice(frozenset(), (), False, False)
    # printed names are scoped by region: the two regions may each define `%0`, and the do-region's
    # argument may share its name with the before-region's; a name is looked up in its own region
    defs = [{r: o for o in block.ops for r in o.results} for block in (before, after)]
    ops: set[int] = set()
    carried: set[int] = set()
    pure, signed = True, True
    work: list[tuple[int, str]] = [(0, term.operands[0])]  # (0: before-region, 1: do-region; name)
    seen: set[tuple[int, str]] = set()
    while work:
        item = work.pop()
        if item in seen:
            continue
        seen.add(item)
        region, v = item
        top = defs[region].get(v)
        if top is not None:
            # an op with regions: every value used anywhere inside it may decide its results
            for o in [top, *(n for r in top.regions for n in accounting.region_ops(r))]:
                ops.add(id(o))
                pure = pure and _pure(o)
                signed = signed and not (o.name == "arith.cmpi" and o.predicate in UNSIGNED)
                work.extend((region, x) for x in o.operands)
        elif region == 0 and v in names:
            carried.add(names.index(v))
            work.append((1, yields[names.index(v)]))
        elif region == 1 and v in after.args:
            j = after.args.index(v)
            if j + 1 >= len(term.operands):
                return LoopSlice(frozenset(), (), False, False)
            work.append((0, term.operands[j + 1]))
        # anything else is defined outside the loop: the same at every iteration
    return LoopSlice(frozenset(ops), tuple(sorted(carried)), pure, signed)


class Cycle:
    """Brent's cycle detection over a sequence of states (tuples of arrays), fed one state per
    iteration: `seen(state, t)` is the iteration of an earlier, equal state, or None. Exact: a state is
    equal only when every array is."""

    def __init__(self) -> None:
        self.snapshot: tuple[np.ndarray, ...] | None = None
        self.at = -1
        self.power = 1
        self.since = 0

    def seen(self, state: tuple[np.ndarray, ...], t: int) -> int | None:
        snap = self.snapshot
        if snap is not None and len(snap) == len(state) and all(_equal(a, b) for a, b in zip(state, snap)):
            return self.at
        self.since += 1
        if snap is None or self.since >= self.power:
            self.snapshot = tuple(np.array(a, copy=True) for a in state)
            self.at, self.since = t, 0
            self.power *= 2
        return None


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        try:
            a, b = np.broadcast_arrays(a, b)
        except ValueError:
            return False
    return bool(np.array_equal(a, b))
