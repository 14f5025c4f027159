"""Function bodies as control-flow graphs: which programs reach each block, and in what order.

Triton lowers an early `return` (`if pid * BLOCK >= n: return`) to `cf.cond_br` between the blocks of
a function body. Both engines evaluate such a body here, block by block in topological order: a
block runs for the programs that *may* reach it, and its accesses are exact only where every such
program *must* reach it (a branch on loaded data makes both successors possible). Block arguments
and return values are joined by the engine. This module knows nothing of values: the engine decides
branch conditions, joins values and evaluates ops; a loop built from blocks is refused by name.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Block, Op, Region

BRANCHES = ("cf.br", "cf.cond_br")


class BlockEngine(Protocol):
    P: int

    def eval_ops(self, block: Block, env: dict[str, Any], ctx: Any) -> Op | None: ...
    def branch_condition(self, value: Any, op: Op) -> np.ndarray | None: ...
    def join(self, incoming: list[tuple[np.ndarray, Any]], op: Op) -> Any: ...
    def narrow(self, ctx: Any, may: np.ndarray, exact: bool) -> Any: ...
    def ctx_pred(self, ctx: Any) -> tuple[np.ndarray, bool]: ...
    def mark_unreachable(self, block: Block, ctx: Any) -> None: ...


def is_graph(region: Region) -> bool:
    """A region whose blocks branch to each other (as opposed to one block ending in a yield/return)."""
    return len(region.blocks) > 1 or any(b.ops and b.ops[-1].name in BRANCHES for b in region.blocks)


def order(region: Region) -> list[int]:
    """Blocks reachable from the entry in topological order; a cycle is refused."""
    index = {b.label: i for i, b in enumerate(region.blocks) if b.label}
    succ = [_targets(b, index) for b in region.blocks]
    state = [0] * len(region.blocks)  # 0 new, 1 on the stack, 2 done
    out: list[int] = []

    def visit(i: int) -> None:
        state[i] = 1
        for j in succ[i]:
            if state[j] == 1:
                op = region.blocks[i].ops[-1]
                raise Refusal("control-flow", "a loop built from blocks (cf branches back to an earlier block)", op.loc)
            if state[j] == 0:
                visit(j)
        state[i] = 2
        out.append(i)

    visit(0)
    return out[::-1]


def _targets(block: Block, index: dict[str, int]) -> list[int]:
    term = block.ops[-1] if block.ops else None
    if term is None:
        return []
    out = []
    for s in term.successors:
        if s.label not in index:
            raise Refusal("reader-misalignment", f"a branch to ^{s.label}, which the region does not have", term.loc)
        out.append(index[s.label])
    return out


def postdominators(region: Region, topo: list[int]) -> dict[int, set[int]]:
    """Blocks every path from a block to a return passes through (the block itself included)."""
    index = {b.label: i for i, b in enumerate(region.blocks) if b.label}
    pdom: dict[int, set[int]] = {}
    for i in reversed(topo):
        succ = _targets(region.blocks[i], index)
        common: set[int] | None = None
        for j in succ:
            common = set(pdom[j]) if common is None else common & pdom[j]
        pdom[i] = {i} | (common or set())
    return pdom


def run(region: Region, env: dict[str, Any], ctx: Any, engine: BlockEngine) -> list[Any]:
    """Evaluate a function body; returns the values its `tt.return`s give, joined over the programs
    that reach each of them."""
    topo = order(region)
    pdom = postdominators(region, topo)
    index = {b.label: i for i, b in enumerate(region.blocks) if b.label}
    pred, exact = engine.ctx_pred(ctx)
    P = pred.shape[0]
    none = np.zeros(P, dtype=bool)
    may = {i: none for i in topo}
    must = {i: none for i in topo}
    incoming: dict[int, list[tuple[np.ndarray, tuple[Any, ...]]]] = {i: [] for i in topo}
    may[topo[0]] = pred
    must[topo[0]] = pred if exact else none
    exits: list[tuple[np.ndarray, list[Any]]] = []
    last_op: Op | None = None
    # values narrowed on the edges that reach a block (a guard `if y == -100: return` narrows y on the
    # other edge): kept while a block has one incoming edge, dropped where edges join
    edge_values = getattr(engine, "edge_values", None)
    narrowed: dict[int, dict[str, Any]] = {}
    edges_in: dict[int, int] = {i: 0 for i in topo}
    for i in topo:
        block = region.blocks[i]
        for j in topo:  # a block post-dominating one that a program must reach is reached too
            if j == i:
                break
            if i in pdom[j]:
                must[i] = must[i] | must[j]
        m = may[i]
        if not m.any():
            engine.mark_unreachable(block, ctx)
            continue
        if i != topo[0]:
            for pos, name in enumerate(block.args):
                env[name] = engine.join([(when, vals[pos]) for when, vals in incoming[i]], block.ops[0])
        over = narrowed.get(i, {}) if edges_in[i] <= 1 else {}
        benv = {**env, **over} if over else env  # this block's view; the shared env stays unnarrowed
        block_exact = not (m & ~must[i]).any()
        term = engine.eval_ops(block, benv, engine.narrow(ctx, m, block_exact))
        if benv is not env:
            for k, v in benv.items():
                if k not in env:
                    env[k] = v
        if term is None:  # every block of a graph ends in a terminator; a reader gap if one does not
            raise Refusal("reader-misalignment", "a block without a terminator", block.ops[-1].loc if block.ops else "")
        last_op = term
        if term.name == "tt.return":
            exits.append((m, [benv[o] for o in term.operands]))
            continue
        if term.name not in BRANCHES:
            raise Refusal("control-flow", f"a block that ends in {term.name}", term.loc)
        edge_over: list[dict[str, Any]] = [over, over]
        if term.name == "cf.br":
            choices = [(m, must[i])]
        else:
            c = engine.branch_condition(benv[term.operands[0]], term)
            if c is None:  # decided by loaded data: either successor may run
                choices = [(m, none), (m, none)]
                if edge_values is not None:
                    edge_over = [{**over, **edge_values(term, pol, benv, ctx)} for pol in (True, False)]
            else:
                c = np.broadcast_to(c, (P,))
                choices = [(m & c, must[i] & c), (m & ~c, must[i] & ~c)]
        for succ, (edge_may, edge_must), eo in zip(term.successors, choices, edge_over):
            j = index[succ.label]
            may[j] = may[j] | edge_may
            must[j] = must[j] | edge_must
            if edge_may.any():
                incoming[j].append((edge_may, tuple(benv[o] for o in succ.operands)))
                edges_in[j] += 1
                narrowed[j] = eo
    if not exits:
        return []
    width = len(exits[0][1])
    anchor = last_op if last_op is not None else region.blocks[0].ops[-1]
    return [engine.join([(when, vals[k]) for when, vals in exits], anchor) for k in range(width)]
