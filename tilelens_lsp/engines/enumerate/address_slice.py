"""The address slice: which integer ops of a module feed a pointer offset (their width is checked).

An op outside the slice may wrap freely (hashes, bit tricks); one inside carries a width obligation
(TL003) when its exact result leaves its width. Follows block arguments, loop-carried values and
induction variables back to their sources.
"""

from __future__ import annotations

import re

from tilelens_lsp.engines import accounting
from tilelens_lsp.ttir.reader import Module, Op

_WHILE_ARG = re.compile(r"(%[\w$.\-]+)\s*=\s*(%[\w$.\-#]+)")


def address_slice(module: Module) -> set[int]:
    """ids of integer ops whose results flow into a pointer offset or a call's arguments."""
    defs: dict[tuple[str, str], Op] = {}
    carried: dict[tuple[str, str], list[str]] = {}
    roots: list[tuple[str, str]] = []
    for fname, func in module.funcs.items():
        for block in func.body.blocks:
            for op in block.ops:
                for succ in op.successors:  # a value passed to a block argument flows on
                    target = func.body.block(succ.label)
                    for arg, src in zip(target.args if target else [], succ.operands):
                        carried.setdefault((fname, arg), []).append(src)
        for op in accounting.region_ops(func.body):
            for r in op.results:
                defs[(fname, r)] = op
            if op.name == "tt.addptr":
                roots.append((fname, op.operands[1]))
            elif op.name == "tt.call":
                roots.extend((fname, o) for o in op.operands)
            if op.name == "scf.for":
                iv = op.for_header.iv
                names = op.for_header.iter_args
                yields = op.regions[0].blocks[0].ops[-1].operands if op.regions[0].blocks[0].ops else []
                for i, n in enumerate(names):
                    srcs = [op.operands[3 + i]] + ([yields[i]] if i < len(yields) else [])
                    carried[(fname, n)] = srcs
                    if i < len(op.results):
                        carried[(fname, op.results[i])] = srcs
                if iv:
                    carried[(fname, iv)] = op.operands[:3]
            if op.name == "scf.while" and len(op.regions) == 2:
                _while_carried(fname, op, carried)
    seen: set[tuple[str, str]] = set()
    ops: set[int] = set()
    stack = list(roots)
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        fname, name = key
        for src in carried.get(key, []):
            stack.append((fname, src))
        defined = defs.get(key)
        if defined is None:
            continue
        ops.add(id(defined))
        for o in defined.operands:
            stack.append((fname, o))
    return ops


def _while_carried(fname: str, op: Op, carried: dict[tuple[str, str], list[str]]) -> None:
    """A while loop's values flow on: its before-region's arguments from its inits and the do-region's
    yields, the do-region's arguments and the loop's results from what `scf.condition` forwards (so a
    counter `i += step` whose `i` feeds an address carries a width obligation)."""
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    term = before.ops[-1] if before.ops else None
    if term is None or term.name != "scf.condition":
        return
    yields = after.ops[-1].operands if after.ops and after.ops[-1].name == "scf.yield" else []
    # the before-region's arguments are named in the header: `scf.while (%i_3 = %i_1, ...)`
    names = before.args or [a for a, _ in _WHILE_ARG.findall(op.text.split(":")[0])]
    for k, arg in enumerate(names):
        srcs = [op.operands[k]] if k < len(op.operands) else []
        carried.setdefault((fname, arg), []).extend(srcs + ([yields[k]] if k < len(yields) else []))
    for j, src in enumerate(term.operands[1:]):
        for name in (after.args[j] if j < len(after.args) else None, op.results[j] if j < len(op.results) else None):
            if name is not None:
                carried.setdefault((fname, name), []).append(src)
