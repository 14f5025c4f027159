"""Recording accesses: the elements a load, store or atomic touches, as intervals, with witnesses.

A mixin of `AccessGraph` (it reads the graph's programs, budget and argument storage): per access the
masked lanes of running programs become element intervals; the first lane out of the storage or out
of the declared view becomes the site's witness. Contiguous rows are read off the pointer's terms
without materializing the tile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from tilelens_lsp.engines import views
from tilelens_lsp.engines.enumerate.lanevalues import Stored
from tilelens_lsp.engines.enumerate.table import Ctx, mask_and
from tilelens_lsp.engines.ranges import PtrSpan
from tilelens_lsp.engines.values import (
    ArgInfo,
    IntV,
    Opaque,
    PtrChoice,
    PtrV,
    SiteResult,
    Value,
    merge_intervals,
    opaque_address_refusal,
    radix_apart,
)
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.values import LaunchModel


def tagged_runs(elems: np.ndarray, progs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element indices with the program that touched each → runs of consecutive elements per program.

    Lanes of one program touching one element (a broadcast row, `idx % n`) are one element: without
    this every repeat would break the run, and a loop would keep a run per lane per iteration. The
    (program, element) pairs are sorted as one integer key where that fits (a store in a loop runs
    this every iteration, and one sort of integers is several times faster than a two-key lexsort)."""
    if elems.size:
        e0, p0 = int(elems.min()), int(progs.min())
        span = int(elems.max()) - e0 + 1
        if span * (int(progs.max()) - p0 + 1) < 1 << 62:
            key = np.sort((progs.astype(np.int64) - p0) * span + (elems.astype(np.int64) - e0))
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
            p, e = np.divmod(key, span)
            return _runs(e + e0, p + p0)
    order = np.lexsort((elems, progs))
    e, p = elems[order], progs[order]
    first_of = np.ones(e.size, dtype=bool)
    first_of[1:] = (e[1:] != e[:-1]) | (p[1:] != p[:-1])
    return _runs(e[first_of], p[first_of])


def _runs(e: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (element, program) pairs sorted by program, then element → their runs."""
    brk = np.ones(e.size, dtype=bool)
    brk[1:] = (np.diff(e) != 1) | (p[1:] != p[:-1])
    first = np.flatnonzero(brk)
    last = np.concatenate((first[1:] - 1, [e.size - 1]))
    return e[first], e[last] + 1, p[first]


BOUND_ENTRIES = 1 << 21  # per-lane bounds kept for the possible-race check, per launch
# what a launch's sites may keep, counted in entries (one interval, or one per-program run), never in
# seconds or bytes: a loop that touches new scattered elements every iteration keeps entries per
# iteration, and past these the worker would run out of memory before the budget of evaluations ends
KEPT_INTERVALS = 1 << 23  # footprint intervals: past this the launch is refused (launch-too-large)
KEPT_RUNS = 1 << 23  # per-program runs for the race check: past this races are not checked (a note)


class WitnessesFound(Exception):
    """Every wanted site has its witness: the run that looked for them can stop."""


class SiteRecorder:
    """The access-recording half of `AccessGraph`."""

    bound_entries = 0
    kept_intervals = 0
    kept_runs = 0
    # sites whose first out-of-bounds lane is all this run is for (a witness program): once each has
    # one, nothing later can change them, and the run stops (`WitnessesFound`)
    wanted: frozenset[tuple] | None = None

    m: "LaunchModel"
    P: int
    pid_base: int
    sites: dict[tuple, SiteResult]
    _steps: dict[tuple[int, int], tuple[np.ndarray, int | None]]
    _current_loc: str
    # the methods of `AccessGraph` this half calls (see there)
    pred_like: Callable[[Ctx, int], np.ndarray]
    pid_tuple: Callable[[int], tuple[int, int, int]]
    _spend: Callable[[int, Op | None], None]

    def record(self, op: Op, kind: str, ptr: Value, mask: Value, ctx: Ctx) -> None:
        """Record the elements that mask-true lanes of running programs touch."""
        if isinstance(ptr, PtrChoice):
            # each candidate is checked against its own storage, on the lanes where it is chosen
            for cand, when in ptr.options:
                sub: Value  # the mask of the lanes where this candidate is the pointer
                if when is None:
                    bound = mask if isinstance(mask, IntV) else mask.bound if isinstance(mask, Opaque) else None
                    sub = Opaque("data", "a pointer chosen by loaded data", op.loc, bound)
                else:
                    sub = mask_and(mask, IntV(when, 1)) if mask is not None else IntV(when, 1)
                self.record(op, kind, cand, sub, ctx)
            return
        if isinstance(ptr, PtrSpan):
            self._record_span(op, kind, ptr, mask, ctx)
            self.check_kept(op)
            return
        if isinstance(ptr, Opaque):
            site = self._site(op, kind, "?", ctx)
            if site.refusal is None:
                site.refusal = opaque_address_refusal(kind, ptr, op.loc)
            return
        if not isinstance(ptr, PtrV):
            raise Refusal("out-of-vocabulary", f"{kind} through a value the model does not follow", op.loc)
        site = self._site(op, kind, ptr.arg, ctx)
        exact = ctx.exact
        if isinstance(mask, Opaque):
            exact = False
            mask = mask.bound
        if not exact:
            site.exact = False
        lanes = ptr.shape()[1:]
        if isinstance(mask, IntV):
            lanes = np.broadcast_shapes(lanes, mask.a.shape[1:])
        shape = (self.P,) + tuple(lanes)
        pred = self.pred_like(ctx, len(shape) - 1)
        lane_mask = mask.a if isinstance(mask, IntV) else np.ones((1,) * len(shape), dtype=bool)
        info = self.m.args[ptr.arg]
        self._current_loc = op.loc
        if self._record_rows(site, ptr, lane_mask, pred, shape, info, ctx, exact):
            self.check_kept(op)
            return
        m_small = pred & lane_mask
        boff = np.broadcast_to(ptr.boff, shape)
        m = np.broadcast_to(m_small, shape)
        elems = boff[m] // info.elem_size
        if elems.size:
            self.keep_intervals(site, lambda: site.add_elements(elems))
            if site.tagged is not None and site.exact:
                starts, ends, progs = tagged_runs(elems, np.nonzero(m)[0] + self.pid_base)
                self.keep_runs(site, starts, ends, progs)
            if site.oob is None and (elems.min() < info.lo or elems.max() >= info.hi):
                self._witness(site, boff, m, info, ctx, exact)
            if info.view is not None and site.view_out is None:
                self._check_view(site, site.starts[-1], site.ends[-1], boff, m, info, ctx, exact)
        self.check_kept(op)
        self._spend(int(np.prod(shape, dtype=np.int64)), op)

    def check_lanes(self, op: Op, ptr: Value, mask: Value, ctx: Ctx, stored: Callable[[], Stored]) -> None:
        """Two lanes of one program storing one element (no defined winner on a GPU): a definite race
        where their values are known and differ (integers, floats converted exactly from them), none
        where they provably store one value (`lanevalues`: one scalar splat over the lanes, one element
        loaded, pure ops of such values), else a possible one. Lanes whose steps form a mixed radix
        cannot collide. `stored` is asked only when two lanes meet."""
        if not isinstance(ptr, PtrV) or isinstance(mask, Opaque) or not ctx.exact:
            return
        site = self._site(op, "store", ptr.arg, ctx)
        if site.lane_race is not None or not site.exact:
            return
        lanes = tuple(ptr.shape()[1:])
        if isinstance(mask, IntV):
            lanes = tuple(np.broadcast_shapes(lanes, mask.a.shape[1:]))
        if int(np.prod(lanes, dtype=np.int64)) < 2 or self._injective(ptr, lanes):
            return
        shape = (self.P,) + lanes
        lane_mask = np.ones((1,) * len(shape), dtype=bool) if not isinstance(mask, IntV) else mask.a
        m = np.broadcast_to(self.pred_like(ctx, len(lanes)) & lane_mask, shape).reshape(self.P, -1)
        prog, lane = np.nonzero(m)
        if prog.size < 2:
            return
        elem = np.broadcast_to(ptr.boff, shape).reshape(self.P, -1)[prog, lane] // self.m.args[ptr.arg].elem_size
        order = np.lexsort((lane, elem, prog))
        prog, lane, elem = prog[order], lane[order], elem[order]
        dup = (elem[1:] == elem[:-1]) & (prog[1:] == prog[:-1])
        self._spend(int(m.size), op)
        if not dup.any():
            return
        values = None
        definite = False
        known = stored()
        if known.values is not None:
            vals = np.broadcast_to(known.values, shape).reshape(self.P, -1)[prog, lane]
            differ = dup & (vals[1:] != vals[:-1])
            if not differ.any():
                return  # every colliding pair stores the same value
            dup, definite = differ, True
        elif known.keys is not None:  # lanes of one class store one value
            keys = np.broadcast_to(known.keys, shape).reshape(self.P, -1)[prog, lane]
            dup = dup & (keys[1:] != keys[:-1])
            if not dup.any():
                return
        i = int(np.argmax(dup))
        a, b = i, i + 1
        if known.values is not None:
            number = float if known.floating else int
            values = (number(vals[a]), number(vals[b]))
        site.lane_race = {
            "pid": self.pid_tuple(int(prog[a])),
            "element": int(elem[a]),
            "definite": definite,
            "lanes": (
                tuple(int(x) for x in np.unravel_index(int(lane[a]), lanes)),
                tuple(int(x) for x in np.unravel_index(int(lane[b]), lanes)),
            ),
            "values": values,
            "origin": known.origin,  # of values not known exactly: "loaded", "computed" or "unfollowed"
            "iteration": ctx.iters or None,
        }

    def _injective(self, ptr: PtrV, lanes: tuple[int, ...]) -> bool:
        steps = []
        for axis, n in enumerate(lanes, start=1):
            if n < 2:
                continue
            parts = [self._axis_step(t, axis) if t.ndim > axis else 0 for t in ptr.terms]
            known = [p for p in parts if p is not None]
            if len(known) != len(parts):
                return False
            a = abs(sum(known))
            if a == 0:
                return False
            steps.append((a, n))
        return radix_apart(steps)

    def _record_span(self, op: Op, kind: str, ptr: PtrSpan, mask: Value, ctx: Ctx) -> None:
        """An address from a declared-range index: per lane the hull [lo, hi] of the elements it may
        touch, a proven bound; a lane that may leave the storage is a possible out-of-bounds (TL002)
        whose witness names the declared index value that takes it there."""
        site = self._site(op, kind, ptr.arg, ctx)
        site.exact = False
        site.tagged = None  # which elements each program touches is not known
        if isinstance(mask, Opaque):
            mask = mask.bound
        shape = (self.P,) + tuple(
            np.broadcast_shapes(ptr.lo.shape, ptr.hi.shape, *([mask.a.shape] if isinstance(mask, IntV) else []))[1:]
        )
        m = np.broadcast_to(self.pred_like(ctx, len(shape) - 1), shape)
        if isinstance(mask, IntV):
            m = m & np.broadcast_to(mask.a, shape)
        if ptr.undef is not None and (np.broadcast_to(ptr.undef, shape) & m).any():
            if site.refusal is None:
                site.refusal = Refusal(
                    "indirect-address",
                    f"the address of this {kind} uses an index loaded by a "
                    "masked-off lane without `other` (its value is undefined)",
                    op.loc,
                )
            return
        info = self.m.args[ptr.arg]
        lo = np.broadcast_to(ptr.lo, shape)[m] // info.elem_size
        hi = np.broadcast_to(ptr.hi, shape)[m] // info.elem_size
        self._spend(int(np.prod(shape, dtype=np.int64)), op)
        if not lo.size:
            return
        # the hulls of a scattered access overlap (a gather over every expert's rows): kept merged
        merged = merge_intervals([lo], [hi + 1])
        self.keep_intervals(site, lambda: site.add_intervals(*merged))
        if ptr.segment:
            # segments between per-program offsets (cu_seqlens, expert offsets, row pointers): disjoint
            # when the offsets are sorted, which a range cannot say; races there are not checked
            site.bounds = None
        if site.bounds is not None:  # per lane, for possible races (TL006), within a budget
            self.bound_entries += int(lo.size)
            if self.bound_entries > BOUND_ENTRIES:
                site.bounds = None
                site.races_unchecked = (
                    f"the footprints to compare are too large (more than {BOUND_ENTRIES:,} per-lane bounds in this launch)"
                )
            else:
                progs, lanes = np.nonzero(m.reshape(self.P, -1))
                site.bounds.append((lo, hi + 1, progs + self.pid_base, lanes))
        if site.oob is None and (lo.min() < info.lo or hi.max() >= info.hi):
            full_lo = np.broadcast_to(ptr.lo, shape) // info.elem_size
            full_hi = np.broadcast_to(ptr.hi, shape) // info.elem_size
            low = m & (full_lo < info.lo)
            bad = low | (m & (full_hi >= info.hi))
            where = np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape)
            at_low = bool(low[where])
            element = int((full_lo if at_low else full_hi)[where])
            value = None
            if ptr.src is not None:
                value = int(np.broadcast_to(ptr.src[0 if at_low else 1], shape)[where])
            site.oob = {
                "pid": self.pid_tuple(int(where[0])),
                "lane": tuple(int(i) for i in where[1:]),
                "iteration": ctx.iters or None,
                "element": element,
                "exact": False,
                "value": value,
                "index": ptr.src[2] if ptr.src is not None else None,
            }
            self._witnessed()

    def _record_rows(
        self,
        site: SiteResult,
        ptr: PtrV,
        lane_mask: np.ndarray,
        pred: np.ndarray,
        shape: tuple[int, ...],
        info: ArgInfo,
        ctx: Ctx,
        exact: bool,
    ) -> bool:
        """Fast path: lines along a lane axis that are contiguous in memory and whose mask is a prefix
        become one interval each (row-major tiles along the last axis, transposed ones along another).
        Read off the pointer's terms and the minimal mask, without materializing the whole tile."""
        size = info.elem_size
        for axis in range(len(shape) - 1, 0, -1):
            n = shape[axis]
            if n < 2:
                continue
            steps = [self._axis_step(t, axis) for t in ptr.terms]
            known = [st for st in steps if st is not None]
            if len(known) != len(steps) or sum(known) != size:
                continue
            # the program predicate is constant along lanes: the mask alone decides prefixes and counts
            first = (slice(None),) * axis + (0,)
            if lane_mask.shape[axis] > 1:
                line = np.moveaxis(lane_mask, axis, -1)
                if not (line[..., 1:] <= line[..., :-1]).all():
                    return False
                counts = line.sum(axis=-1)
            else:
                counts = lane_mask[first].astype(np.int64) * n
            counts = counts * pred[first]
            head = ptr.terms[0][first]  # a view: no copy of the term
            for term in ptr.terms[1:]:
                head = head + term[first]
            reduced = shape[:axis] + shape[axis + 1 :]
            head = np.broadcast_to(head, reduced)
            counts = np.broadcast_to(counts, reduced)
            live = counts > 0
            # the work is one row head each; spent after recording, so what was found is kept
            if not live.any():
                self._spend(int(np.prod(reduced, dtype=np.int64)), None)
                return True
            starts = head[live]
            if (starts % size).any():
                return False
            starts = starts // size
            ends = starts + counts[live]
            self.keep_intervals(site, lambda: site.add_intervals(starts, ends))
            if site.tagged is not None and site.exact:
                self.keep_runs(site, starts, ends, np.nonzero(live)[0] + self.pid_base)
            if site.oob is None and (starts.min() < info.lo or ends.max() > info.hi):
                self._witness(
                    site, np.broadcast_to(ptr.boff, shape), np.broadcast_to(pred & lane_mask, shape), info, ctx, exact
                )
            if info.view is not None and site.view_out is None:
                self._check_view(
                    site,
                    starts,
                    ends,
                    np.broadcast_to(ptr.boff, shape),
                    np.broadcast_to(pred & lane_mask, shape),
                    info,
                    ctx,
                    exact,
                )
            self._spend(int(np.prod(reduced, dtype=np.int64)), None)
            return True
        return False

    def keep_intervals(self, site: SiteResult, add: Callable[[], None]) -> None:
        """Add intervals to the site's footprint, counting those it keeps against `KEPT_INTERVALS`
        (those a loop continues along its rows add nothing)."""
        before = sum(int(a.size) for a in site.starts[-1:]), len(site.starts)
        add()
        if len(site.starts) > before[1]:
            self.kept_intervals += int(site.starts[-1].size)
        elif site.starts:
            self.kept_intervals += max(0, int(site.starts[-1].size) - before[0])

    def check_kept(self, op: Op) -> None:
        """Past `KEPT_INTERVALS` every site's footprint is merged (intervals that overlap or touch
        become one), and the launch is refused only if more than half of them remain: a footprint that
        merges well goes on, and merging again waits until as many new intervals came in. Called once
        an access is recorded and its witnesses are taken, so a finding in its intervals is kept."""
        if self.kept_intervals <= KEPT_INTERVALS:
            return
        self.kept_intervals = sum(site.compact() for site in self.sites.values())
        if self.kept_intervals > KEPT_INTERVALS // 2:
            raise Refusal(
                "launch-too-large",
                f"the footprint of this launch needs more than {KEPT_INTERVALS:,} element intervals kept "
                "(accesses that reach new, scattered elements at every loop iteration); declare a smaller "
                "launch (smaller sizes, fewer programs or loop iterations) to check it",
                op.loc,
            )

    def keep_runs(self, site: SiteResult, starts: np.ndarray, ends: np.ndarray, progs: np.ndarray) -> None:
        """Per-program runs for the race check, counted against `KEPT_RUNS`: past it every site of the
        launch drops them and says why (the race client then notes races as not checked)."""
        before = len(site.tagged) if site.tagged is not None else 0
        site.add_tagged(starts, ends, progs)
        if site.tagged is not None and len(site.tagged) > before:
            self.kept_runs += int(starts.size)
        if self.kept_runs > KEPT_RUNS:
            for other in self.sites.values():
                if other.tagged is not None:
                    other.tagged = None
                    other.races_unchecked = (
                        f"the footprints to compare are too large (more than {KEPT_RUNS:,} per-program runs in this launch)"
                    )

    def _axis_step(self, term: np.ndarray, axis: int) -> int | None:
        """The uniform step of `term` along `axis` (0 when constant), None when it is not uniform."""
        if term.ndim <= axis or term.shape[axis] == 1 or term.strides[axis] == 0:
            return 0
        key = (id(term), axis)
        hit = self._steps.get(key)
        if hit is not None and hit[0] is term:
            return hit[1]
        d = np.diff(term, axis=axis)
        first = int(d.reshape(-1)[0])
        step = first if (d == first).all() else None
        if len(self._steps) > 512:
            self._steps.clear()
        self._steps[key] = (term, step)
        return step

    def _check_view(
        self,
        site: SiteResult,
        starts: np.ndarray,
        ends: np.ndarray,
        boff: np.ndarray,
        m: np.ndarray,
        info: ArgInfo,
        ctx: Ctx,
        exact: bool,
    ) -> None:
        """The first element this access touches inside the storage but outside the declared view."""
        if info.view is None:  # callers check first: without a view nothing lies outside it
            return
        element = views.first_outside(starts, ends, info.view, info.lo, info.hi)
        if element is None:
            return
        bad = m & (boff // info.elem_size == element)
        where = np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape)
        site.view_out = {
            "pid": self.pid_tuple(int(where[0])),
            "lane": tuple(int(i) for i in where[1:]),
            "iteration": ctx.iters or None,
            "element": element,
            "exact": exact,
        }

    def _witness(self, site: SiteResult, boff: np.ndarray, m: np.ndarray, info: ArgInfo, ctx: Ctx, exact: bool) -> None:
        full = boff // info.elem_size
        bad = m & ((full < info.lo) | (full >= info.hi))
        flat = int(np.argmax(bad.reshape(-1)))
        where = np.unravel_index(flat, bad.shape)
        site.oob = {
            "pid": self.pid_tuple(int(where[0])),
            "lane": tuple(int(i) for i in where[1:]),
            "iteration": ctx.iters or None,
            "element": int(full[where]),
            "exact": exact,
        }
        self._witnessed()

    def _witnessed(self) -> None:
        if self.wanted is not None and all(k in self.sites and self.sites[k].oob is not None for k in self.wanted):
            raise WitnessesFound()

    def _site(self, op: Op, kind: str, arg: str, ctx: Ctx) -> SiteResult:
        key = (id(op), ctx.stack, arg)
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = SiteResult(kind, arg, op.loc, ctx.stack)
        return site
