"""The address slice: which integer ops of a module feed a pointer offset (their width is checked).

An op outside the slice may wrap freely (hashes, bit tricks); one inside carries a width obligation
(TL003) when its exact result leaves its width. Follows block arguments, loop-carried values and
induction variables back to their sources.
"""

from __future__ import annotations

from tilelens_lsp.engines import accounting
from tilelens_lsp.ttir.reader import Module, Op


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
