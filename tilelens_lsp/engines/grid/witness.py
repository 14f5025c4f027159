"""Definite verdicts of the grid engine: candidate programs evaluated concretely by the enumeration.

Where a grid bound leaves the storage, or an address computation may leave its width, a few
programs are evaluated exactly (`AccessGraph.run_programs`, one program at a time): the corners of
the grid, the programs the bounds name as reaching their extremes, the last programs. An
out-of-bounds access or an overflow that such a run shows is reported with that run's witness; a
bound no run confirms stays a possible out-of-bounds (TL002, `exact: false`) and an unconfirmed
overflow a note. Never the other way round.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING

from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.refusal import Refusal

if TYPE_CHECKING:
    from tilelens_lsp.engines.grid.graph import GridGraph

MAX_CANDIDATES = 48  # programs evaluated concretely per launch
WITNESS_SHARE = 16  # of the launch's budget, for those evaluations


def candidates(g: GridGraph) -> list[int]:
    """Linear program indices to evaluate, most promising first, without repeats."""
    gx, gy, gz = g.m.grid
    out: list[int] = []
    for entry in list(g.pending_obligations.values()) + list(g.pending_sites.values()):
        out.extend(entry["programs"])
    for x, y, z in itertools.product((gx - 1, 0), (gy - 1, 0), (gz - 1, 0)):
        out.append(g.m.program_index(x, y, z))
    out.extend(range(max(0, g.P - 4), g.P))
    return list(dict.fromkeys(p for p in out if 0 <= p < g.P))[:MAX_CANDIDATES]  # first occurrences, in order


def confirm(g: GridGraph) -> None:
    if not g.pending_sites and not g.pending_obligations:
        return
    g.candidates = candidates(g)
    model = dataclasses.replace(g.m, budget=max(1, g.m.budget // WITNESS_SHARE))
    concrete = AccessGraph(model)
    tried = 0
    for p in g.candidates:
        try:
            concrete.run_programs(p, 1)
        except Refusal as refusal:
            g.notes.append(f"a witness program ({p}) could not be evaluated concretely: {refusal.kind}")
            break
        tried += 1
        if all(
            key in concrete.obligations and concrete.obligations[key].violation is not None for key in g.pending_obligations
        ) and all(key in concrete.sites and concrete.sites[key].oob is not None for key in g.pending_sites):
            break
    for key, ob in concrete.obligations.items():
        if ob.violation is not None and key in g.obligations:
            g.obligations[key].violation = ob.violation
    for key, entry in g.pending_obligations.items():
        if g.obligations[key].violation is None:
            g.notes.append(
                f"i{g.obligations[key].bits} {g.obligations[key].op.split('.')[-1]} at "
                f"{g.obligations[key].loc or 'an address computation'} may leave its width for some "
                f"program; {tried} programs evaluated concretely did not show it, so its addresses "
                "are bounded by the whole width"
            )
    for key, site in g.sites.items():
        real = concrete.sites.get(key)
        if real is not None and real.oob is not None and site.oob is None:
            oob = dict(real.oob)
            confirmed = real.exact and bool(oob.get("exact", True))
            oob["exact"] = confirmed
            oob["confirmed"] = confirmed
            oob["shown"] = True  # one program's own evaluation reaches it (exactly, or at a declared value)
            site.oob = oob
        elif key in g.pending_sites and site.oob is None:
            entry = g.pending_sites[key]
            program = (entry["programs"] or g.candidates or [g.P - 1])[0]
            site.oob = {
                "pid": _pid(g, program),
                "lane": entry["lane"],
                "iteration": None,
                "element": entry["element"],
                "exact": False,
            }


def _pid(g: GridGraph, p: int) -> tuple[int, int, int]:
    gx, gy, _ = g.m.grid
    return (p % gx, (p // gx) % gy, p // (gx * gy))
