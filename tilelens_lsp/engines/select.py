"""Engine choice, by a budget decided before computing: the enumeration or the affine summary where
the launch is small enough for them, the grid engine past that.

In: `values.LaunchModel`. Out: an `Answer`, the engine that answered (`AffineGraph`, `AccessGraph` or
`GridGraph`, each an `Engine`: the interface the clients and the accounting read) and its name.
The size of a launch is its programs times the lanes and ops of its module, read off the module
before anything is evaluated. Also the test modes of `TILELENS_ENGINE`:
`enumerate` (the enumeration only), `compare` (both exact engines on every summarized launch, which
must agree), `grid` (the grid engine on every launch), and `ENGINES`, a count of launches answered
per engine in this process.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from typing import Protocol

from tilelens_lsp.engines import accounting, pinned
from tilelens_lsp.engines.affine import AffineGraph, NotAffine, OutOfBoundsFound
from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.engines.grid import GridGraph, NotGrid
from tilelens_lsp.engines.values import LaunchModel, Obligation, SiteResult
from tilelens_lsp.refusal import Refusal

WITNESS_SHARE = 256  # an out-of-bounds launch is enumerated when it fits budget / this
ENGINE_ENV = "TILELENS_ENGINE"  # auto (default) | enumerate | compare (tests: both engines, must agree) | grid
GRID_PROGRAMS = 1 << 16  # launches of more programs than this go to the grid engine ...
GRID_SHARE = 16  # ... unless programs x lanes x ops fit the budget / this
ENGINES: Counter[str] = Counter()  # launches answered per engine in this process (tests and benchmarks)


class Engine(Protocol):
    """What every engine leaves after `run()`: a result per access site, the refusal that cut it short
    (a budget, a construct it does not follow), the memory ops it proved never run, and the integer
    width obligations of the address arithmetic it evaluated."""

    sites: dict[tuple, SiteResult]
    truncated: Refusal | None
    unreachable: set[accounting.Context]

    def width_obligations(self) -> list[Obligation]: ...


@dataclasses.dataclass(frozen=True)
class Answer:
    """The engine that answered a launch, by name (`enumerate`, `affine` or `grid`: the launch JSON's
    `engine`), and the notes it has for the user."""

    graph: Engine
    engine: str
    notes: tuple[str, ...] = ()
    # where the grid engine answers an enumeration that stopped at its budget: that enumeration, whose
    # definite findings (if it made any) the caller keeps instead, as without the grid engine
    replaced: Engine | None = None


def engine_mode() -> str:
    return os.environ.get(ENGINE_ENV, "auto")


def engine_name(graph: Engine) -> str:
    """`enumerate`, `affine` or `grid`: the engine whose answer this is (the launch JSON's `engine`)."""
    if isinstance(graph, GridGraph):
        return "grid"
    return "enumerate" if isinstance(graph, AccessGraph) else "affine"


def _answer(graph: Engine) -> Answer:
    if isinstance(graph, GridGraph):
        return Answer(graph, engine_name(graph), tuple(graph.notes), graph.replaced)
    return Answer(graph, engine_name(graph))


def launch_size(model: LaunchModel) -> int:
    """Programs x the widest value's lanes x the module's ops: what enumerating the launch would cost
    at least (loops counted once), computed from the module alone."""
    gx, gy, gz = model.grid
    lanes, ops = 1, 0
    for f in model.module.funcs.values():
        for op in accounting.region_ops(f.body):
            ops += 1
            for t in op.result_types:
                n = 1
                for s in t.shape:
                    n *= s
                lanes = max(lanes, n)
    return gx * gy * gz * lanes * max(ops, 1)


EXACT_RETRY_PROGRAMS = 1 << 20  # up to here a grid answer with an unconfirmed bound is retried exactly


def unconfirmed(graph: Engine) -> bool:
    """Some site's footprint leaves its storage without a concretely confirmed witness (a TL002)."""
    return any(site.oob is not None and not site.oob.get("confirmed", False) for site in graph.sites.values())


def loose(graph: Engine) -> bool:
    """Some site's footprint leaves its storage where no single program evaluated concretely reaches
    it: the grid engine's bound alone says so, which may be its own looseness."""
    return any(site.oob is not None and not site.oob.get("shown", False) for site in graph.sites.values())


def wants_grid(model: LaunchModel) -> bool:
    gx, gy, gz = model.grid
    return gx * gy * gz > GRID_PROGRAMS and launch_size(model) > model.budget // GRID_SHARE


def analyze(model: LaunchModel) -> Answer:
    """`choose`'s engine, with its name and notes; a possible out-of-bounds through loaded data, and
    a store through it whose races were not checked, shown at a declared value where one shows them
    (`pinned`)."""
    engine = choose(model)
    try:
        pinned.show_at_declared_values(model, engine.sites)
        pinned.show_meeting_stores(model, engine.sites)
    except Exception:  # a bug of a witness's refinement must not cost the launch its verdict
        if engine_mode() == "compare":
            raise  # ... but tests must see it
        ENGINES["pinned-failed"] += 1
    return _answer(engine)


def choose(model: LaunchModel) -> Engine:
    """The engine for this launch, decided from its size before anything is evaluated.

    A small launch: its summary when it stays in the affine fragment, else its enumeration, or the grid
    engine where the enumeration would likely exceed its budget and a program evaluated concretely
    shows every out-of-bounds the grid engine found (a paged-attention decode over loaded block
    tables: thousands of programs, each looping over hundreds of blocks). A launch
    too large for those (`wants_grid`): the affine summary with program ids as variables (exact, and
    its cost does not grow with the programs), else the grid engine; a launch neither follows goes
    the small launch's way, under the same budget (refused past it, never run out of memory).

    An out-of-bounds launch is enumerated when that fits a share of the budget, so its witness is
    the one enumeration reports at any size that fits; past that, the summary keeps its exact
    footprint and takes each witness from enumerating the one program found to show it."""
    mode = engine_mode()
    if mode == "grid":
        forced = _grid(model, forced=True)
        assert forced is not None, "the forced grid engine refuses a launch, it never declines one"
        return forced
    if mode == "auto" and wants_grid(model):
        gx, gy, gz = model.grid
        # the summary keeps per-program arrays only for launches within its budget: below the program
        # count, program ids become box variables (`AffineGraph.run`), so the summary stays small
        small = dataclasses.replace(model, budget=min(model.budget, gx * gy * gz - 1))
        answer: Engine | None = _summary(small, mode)
        if answer is None:
            answer = _grid(model, forced=False)
            if answer is not None and unconfirmed(answer) and gx * gy * gz <= EXACT_RETRY_PROGRAMS:
                # a bound the grid engine could not confirm may be its own looseness (a swizzle's
                # `min`, a `pid % c` trip count): the summary with per-program values is exact
                # where it applies, and still cheap at this many programs
                answer = _summary(model, mode) or answer
        if answer is not None:
            return answer
    grid: GridGraph | None = None
    if mode != "enumerate":
        answer = _summary(model, mode)
        if answer is not None:
            return answer
        if mode == "auto" and launch_size(model) > model.budget:
            # the enumeration would likely run past its budget and be refused (`launch_size` is its
            # cost with every loop counted once, in lanes where it often works by rows): the
            # grid engine's answer is taken where every out-of-bounds it has is one that a program
            # evaluated concretely shows, as the enumeration would; a bound no program reaches (a
            # TL002 that may be the grid's own looseness) or a refusal of its own leaves the launch to
            # the enumeration, as before
            grid = _grid(model, forced=False)
            if grid is not None and grid.truncated is None and not loose(grid):
                return grid
    graph = AccessGraph(model)
    graph.run()
    ENGINES["enumeration"] += 1
    if mode == "auto" and _over_budget(graph):
        # `launch_size` counts each loop once: a loop whose trip count comes from loaded data (the
        # blocks of each request's context) can take the enumeration past its budget at a size the
        # estimate let through. The grid engine answers such a launch where every out-of-bounds it
        # finds is one a program evaluated concretely shows, as before the enumeration
        grid = grid if grid is not None else _grid(model, forced=False)
        if grid is not None and grid.truncated is None and not loose(grid):
            ENGINES["grid-after-budget"] += 1
            grid.replaced = graph
            return grid
        if graph.projected:
            # the enumeration stopped at what its first trips and programs cost, which may overstate
            # the rest (a causal loop's last programs run longest): followed to its budget, as before
            graph = AccessGraph(model)
            graph.projecting = False
            graph.run()
            ENGINES["enumeration"] += 1
    return graph


def _over_budget(graph: AccessGraph) -> bool:
    """The enumeration stopped at its budget (not at a construct it does not follow)."""
    return graph.truncated is not None and graph.truncated.kind == "launch-too-large"


def _grid(model: LaunchModel, forced: bool) -> GridGraph | None:
    grid = GridGraph(model)
    try:
        grid.run()
    except NotGrid as exc:
        if forced:  # the forced mode: refused by kind, never another engine's answer
            raise Refusal("out-of-vocabulary", f"the grid engine does not follow this launch: {exc}") from None
        ENGINES["grid-declined"] += 1
        return None
    ENGINES["grid"] += 1
    return grid


def _summary(model: LaunchModel, mode: str) -> AffineGraph | AccessGraph | None:
    """The affine summary (or, for an out-of-bounds launch that fits, its enumeration); None when the
    launch leaves the fragment."""
    summary = AffineGraph(model)
    # an out-of-bounds launch is enumerated where that fits a share of the budget: at its first
    # out-of-bounds site the summary stops and the enumeration is tried; only where it does not fit
    # is the summary run whole, for the programs that show each witness
    summary.stop_at_oob = True
    try:
        try:
            summary.run()
        except OutOfBoundsFound:
            trial = AccessGraph(dataclasses.replace(model, budget=max(1, model.budget // WITNESS_SHARE)))
            trial.run()
            if trial.truncated is None:
                ENGINES["enumeration"] += 1
                return trial
            summary = AffineGraph(model)
            summary.run()
        if summary.pending:
            summary.fill_witnesses()
    except (NotAffine, OverflowError):  # OverflowError: a coefficient past int64
        return None
    except Exception:  # a bug of the summary must not cost the launch its verdict: enumerate
        if mode == "compare":
            raise  # ... but tests must see it
        ENGINES["summary-failed"] += 1
        return None
    if mode == "compare":
        compare(summary, model)
    ENGINES["summary"] += 1
    return summary


def site_footprints(sites: dict) -> dict:
    """What an engine found at each site, in a form two engines can be compared by (witnesses aside:
    the summary's may come from another program)."""
    out = {}
    for key, site in sites.items():
        s, e = site.intervals()
        refused = site.refusal.kind if site.refusal else None
        out[key] = (site.op, site.loc, s.tolist(), e.tolist(), site.exact, site.oob is not None, refused)
    return out


def compare(summary: AffineGraph, model: LaunchModel) -> None:
    """Enumerate a summarized launch too and insist on the same sites and footprints (a test mode:
    each engine checks the other on every launch the summary answers)."""
    graph = AccessGraph(model)
    graph.run()
    if graph.truncated is not None:
        return

    a, b = site_footprints(summary.sites), site_footprints(graph.sites)
    if a != b:
        diff = [(a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)]
        raise AssertionError(f"the affine summary and the enumeration disagree: {str(diff[0])[:600]}")
    if any(ob.violation is not None for ob in graph.width_obligations()):
        raise AssertionError("the enumeration finds an overflow the affine summary did not")
