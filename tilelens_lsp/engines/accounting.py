"""The invariant behind "clean": every memory op that some program can reach is accounted for.

After a launch is evaluated, each memory op of the compiled module, in each call context the entry
reaches (`tt.call` chains), must have an access site in the engine's result (with a footprint or a
refusal) or have been proven unreachable by the engine (a loop with no trip, a block no program
reaches). Anything else was silently skipped, and the launch is refused as `unvisited`: an
"analyzed" launch with fewer accounted memory ops than its module has is impossible by construction.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterator

from tilelens_lsp.ttir.reader import Block, Module, Op, Region

MEMORY_OP = re.compile(r"load|store|atomic|descriptor|gather|scatter|async|tma|copy|prefetch")
REGISTER_OPS = (
    "tt.gather",
    "tt.histogram",  # names that sound like memory but stay in registers
    "tt.make_tensor_descriptor",
)  # (a descriptor is a pointer with a shape: its loads access)
MAX_CONTEXTS = 1 << 16
COUNTS: Counter[str] = Counter()  # launches checked, memory ops seen and accounted (tests read it)

Context = tuple[int, tuple[str, ...]]  # (id of the op, call-site locs innermost last)


def is_memory_op(op: Op) -> bool:
    return bool(MEMORY_OP.search(op.name)) and op.name not in REGISTER_OPS


def contexts_in_ops(
    ops: Iterator[Op], module: Module, stack: tuple[str, ...], depth: int = 0
) -> Iterator[tuple[Op, tuple[str, ...]]]:
    """(memory op, call stack) for the ops given and everything they reach through calls."""
    for op in ops:
        if is_memory_op(op):
            yield op, stack
        if op.name == "tt.call" and depth <= 32:
            func = module.funcs.get(op.callee)
            if func is not None:
                yield from contexts_in_ops(region_ops(func.body), module, stack + (op.loc,), depth + 1)


def region_ops(region: Region) -> Iterator[Op]:
    for block in region.blocks:
        yield from block_ops(block)


def block_ops(block: Block) -> Iterator[Op]:
    """Every op of a block, nested regions included."""
    for op in block.ops:
        yield op
        for r in op.regions:
            yield from region_ops(r)


def reachable_contexts(module: Module) -> dict[Context, Op]:
    out: dict[Context, Op] = {}
    for op, stack in contexts_in_ops(region_ops(module.funcs[module.entry].body), module, ()):
        out[(id(op), stack)] = op
        if len(out) > MAX_CONTEXTS:
            break
    return out


def unvisited(module: Module, sites: dict, unreachable: set[Context]) -> list[Op]:
    """Memory ops (in some call context) with neither an access site nor a proof of unreachability."""
    seen = {(key[0], key[1]) for key in sites} | unreachable
    wanted = reachable_contexts(module)
    missing = [op for ctx, op in wanted.items() if ctx not in seen]
    COUNTS["launches"] += 1
    COUNTS["memory-ops"] += len(wanted)
    COUNTS["accounted"] += len(wanted) - len(missing)
    COUNTS["unvisited"] += len(missing)
    return missing
