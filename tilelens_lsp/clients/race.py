"""race: an element one program stores without an atomic and a different program of the same launch
loads or stores without an atomic (TL005). Programs of a launch run in no defined order, so the
result depends on scheduling; compute-sanitizer's racecheck sees only shared memory, and the
interpreter runs programs one after another. Decided exactly from per-program footprints; where they
are not known (a bound, a lock built on atomic_cas, a summary too large to split per program) the
launch gets a note instead, never a guess."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis, frame_fields
from tilelens_lsp.engines.values import merge_intervals, radix_apart
from tilelens_lsp.model import Diagnostic, Witness


@dataclass
class _Runs:
    """Per-program merged runs of one kind of access to one argument: sorted by start."""

    starts: np.ndarray
    ends: np.ndarray
    progs: np.ndarray
    sites: np.ndarray  # index of the site each run came from


# what is known of the values two lanes store when they are not known exactly (the race record's origin)
_LANE_VALUES = {
    "loaded": "that depend on loaded data",
    "computed": "computed per lane that are not known exactly",
    "unfollowed": "the analysis does not follow",
}
RACE_RUNS = 1 << 24  # per-program runs of one argument this check sorts; past it, a note (memory)


class RaceClient(IRClient):
    name = "race"

    def run(self, analysis: LaunchAnalysis) -> ClientOutput:
        out = ClientOutput()
        if analysis.locked:
            out.notes.append("races not checked: the kernel takes a lock (atomic_cas), which orders programs")
            return out
        sites = [s for s in analysis.sites if s.op in ("load", "store") and s.arg in analysis.args and s.refusal is None]
        for site in sites:
            if site.op == "store" and site.lane_race is not None:
                out.diagnostics.append(self._lane_diagnostic(analysis, site))
        for arg in sorted({s.arg for s in sites if s.op == "store"}):
            mine = [s for s in sites if s.arg == arg]
            if all(s.per_program is not None for s in mine):
                # the grid engine's symbolic footprints: disjoint programs proven, or a note
                if not _programs_disjoint(mine):
                    out.notes.append(
                        f"races on {arg} not decided: at this grid size the per-program footprints "
                        "are bounds, and they could not be proven disjoint between programs"
                    )
                # two lanes of one store meeting: decided where the grid engine shows every live lane of
                # each store its own element, else said, never left to read as "no race between lanes"
                if not all(s.per_program.lanes_distinct for s in mine if s.op == "store"):
                    out.notes.append(f"races between lanes of one store to {arg} not checked at this grid size")
                continue
            info = analysis.args[arg]
            # footprints are int64 arrays: a storage past 2**63 elements ([2**32, 2**32]) is clamped to what they can hold
            lo, hi = max(info.lo, _I64_MIN), min(info.hi, _I64_MAX)
            if _lone_store_apart(mine, lo, hi):
                continue
            if mine[0].apart_form is not None and all(s.apart_form == mine[0].apart_form for s in mine):
                # one address for every access (an in-place update at production size) that keeps
                # programs apart: an element one program loads or stores, no other program touches
                continue
            if any(s.apart_form is not None for s in mine):
                out.notes.append(
                    f"races on {arg} not checked: at this grid size no program's own footprint is listed, and "
                    f"the accesses to {arg} do not all share one address that keeps programs apart; a smaller "
                    "launch checks them"
                )
                continue
            for site in mine:
                site.fill_tagged()  # the per-program runs an engine left until they were needed
            met = next((s for s in mine if s.meets is not None), None)
            if met is not None:  # two programs evaluated at one declared value store one element
                out.diagnostics.append(self._met_diagnostic(analysis, met))
                continue
            dropped = next((s.races_unchecked for s in mine if s.races_unchecked), None)
            runs = sum(int(a.size) for s in mine if s.tagged is not None for a, _, _ in s.tagged)
            if dropped is None and runs > RACE_RUNS:
                dropped = (
                    f"the footprints to compare are too large ({runs:,} per-program runs, more than the "
                    f"{RACE_RUNS:,} this check sorts)"
                )
            if dropped is not None:
                out.notes.append(f"races on {arg} not checked: {dropped}; a smaller launch checks them")
                continue
            unknown = [s for s in mine if s.tagged is None or not s.exact]
            if unknown:
                if all(s.bounds for s in unknown if s.tagged is None) and all(s.tagged is None or s.exact for s in mine):
                    found = _possible(mine, analysis.args[arg].lo, analysis.args[arg].hi)
                    if found is not None and _between_lanes(found) and not _range_names(analysis, None):
                        # no declared range to blame: the lanes' bounds come from counts of conditions
                        # (a compaction's running sums, a histogram's starts), distinct on the lanes
                        # that store in the idioms that build them, which bounds cannot show
                        out.notes.append(
                            f"races between lanes of one store to {arg} not checked: its lanes are addressed "
                            "by values computed from loaded data (counts or running sums of conditions), "
                            "bounded lane by lane but not ordered"
                        )
                    elif found is not None:
                        out.diagnostics.append(self._possible_diagnostic(analysis, mine, found))
                    continue
                segment = any(s.tagged is None and s.bounds is None for s in unknown)
                branch = any(s.tagged is not None and not s.exact for s in unknown)
                why = (
                    "is a bound between per-program offsets loaded from a declared range (segments such as "
                    "cu_seqlens or expert offsets, disjoint only when the offsets are sorted)"
                    if segment
                    else "is a bound: it runs under a mask or branch that loaded data decides"
                    if branch
                    else "is not known exactly (a mask or address from loaded data without a declared range: "
                    "declare the index tensor's `.values(LO, HI)`)"
                )
                out.notes.append(f"races on {arg} not checked: the per-program footprint of the {unknown[0].op} there {why}")
                continue
            if _cannot_race(mine, lo, hi):
                continue
            found = _find(mine, lo, hi)
            if found is not None:
                out.diagnostics.append(self._diagnostic(analysis, mine, found))
        return out

    def _diagnostic(self, analysis: LaunchAnalysis, sites: list, found: tuple) -> Diagnostic:
        element, (a_site, a_prog), (b_site, b_prog) = found
        # runs of one program were merged across its sites: name the sites that touch this very element
        a_site = _site_of(sites, sites[a_site].op, a_prog, element, a_site)
        b_site = _site_of(sites, sites[b_site].op, b_prog, element, b_site)
        first, second = sites[a_site], sites[b_site]
        if first.op != "store":
            first, second, a_prog, b_prog = second, first, b_prog, a_prog
        stack = analysis.stack_of(first.loc, first.call_stack)
        other = frame_fields(analysis.stack_of(second.loc, second.call_stack))
        where = frame_fields(stack)
        pa, pb = analysis.program(int(a_prog)), analysis.program(int(b_prog))
        verb = "stores" if second.op == "store" else "loads"
        return Diagnostic(
            code="TL005",
            message=(
                f"race between programs: program {pa} stores element {element} of {first.arg} (line "
                f"{where['line']}) and program {pb} {verb} it (line {other['line']}) without an atomic; "
                "the programs of a launch run in no fixed order"
            ),
            line=where["line"],
            column=where["column"],
            stack=stack,
            witness=Witness(pa, (), None, int(element), None),
            kind=self.name,
        )

    def _lane_diagnostic(self, analysis: LaunchAnalysis, site) -> Diagnostic:
        race = site.lane_race
        stack = analysis.stack_of(site.loc, site.call_stack)
        where = frame_fields(stack)
        pid = tuple(race["pid"])
        a, b = (_lane_text(x) for x in race["lanes"])
        it = race.get("iteration")
        when = f", loop iteration {', '.join(map(str, it))}" if it else ""
        if race["definite"]:
            va, vb = race["values"]
            code = "TL005"
            message = (
                f"race between lanes: lanes {a} and {b} of program {pid}{when} store the values {va} "
                f"and {vb} to element {race['element']} of {site.arg} in one store; which one lands "
                "is not defined"
            )
        else:
            code = "TL006"
            message = (
                f"possible race between lanes: lanes {a} and {b} of program {pid}{when} store to element "
                f"{race['element']} of {site.arg} in one store, with values {_LANE_VALUES[race['origin']]}; "
                "which one lands is not defined where they differ"
            )
        return Diagnostic(
            code=code,
            message=message,
            line=where["line"],
            column=where["column"],
            stack=stack,
            witness=Witness(tuple(pid), tuple(race["lanes"][0]), tuple(it) if it else None, race["element"], None),
            kind=self.name,
        )

    def _met_diagnostic(self, analysis: LaunchAnalysis, site) -> Diagnostic:
        element, a, b, value, tensor = site.meets
        stack = analysis.stack_of(site.loc, site.call_stack)
        where = frame_fields(stack)
        pa, pb = analysis.program(a), analysis.program(b)
        return Diagnostic(
            code="TL006",
            message=(
                f"possible race: programs {pa} and {pb} both store element {element} of {site.arg} (line "
                f"{where['line']}) without an atomic when every element of {tensor} holds {value}, a value "
                "in its declared range; use an atomic (tl.atomic_add) if they can meet, or suppress with "
                "`# tilelens: ignore[TL006]` if those values never repeat"
            ),
            line=where["line"],
            column=where["column"],
            stack=stack,
            witness=Witness(pa, (), None, int(element), value),
            kind=self.name,
        )

    def _possible_diagnostic(self, analysis: LaunchAnalysis, sites: list, found: tuple) -> Diagnostic:
        element, (a_site, a_key), (b_site, b_key) = found
        first, second = sites[a_site], sites[b_site]
        if first.op != "store":
            first, second, a_key, b_key = second, first, b_key, a_key
        stack = analysis.stack_of(first.loc, first.call_stack)
        where = frame_fields(stack)
        other = frame_fields(analysis.stack_of(second.loc, second.call_stack))

        def who(key: int) -> str:
            prog, lane = divmod(int(key), 1 << 24)
            pid = analysis.program(prog)
            return f"program {pid}" + (f" (lane {lane - 1})" if lane > 0 else "")

        verb = "store" if second.op == "store" else "load"
        names = sorted({n for s in (first, second) for n in _range_names(analysis, s)})
        values = f"for some values of {', '.join(names)} in the declared ranges" if names else "for some loaded data"
        return Diagnostic(
            code="TL006",
            message=(
                f"possible race: {who(a_key)} may store element {element} of {first.arg} (line {where['line']}) "
                f"and {who(b_key)} may {verb} it (line {other['line']}) without an atomic, {values}; use an "
                "atomic (tl.atomic_add) if they can meet, or suppress with `# tilelens: ignore[TL006]` if "
                "those values never repeat"
            ),
            line=where["line"],
            column=where["column"],
            stack=stack,
            witness=Witness(analysis.program(int(a_key) >> 24), (), None, int(element), None),
            kind=self.name,
        )


def _bound_runs(sites: list, op: str, lo: int, hi: int, by_lane: bool) -> _Runs:
    """Element intervals of these sites inside [lo, hi), keyed per program (and per lane where
    `by_lane`): per-lane bounds of a declared-range address, per-program runs of an exact one."""
    s, e, p, k = [], [], [], []
    for index, site in enumerate(sites):
        if site.op != op:
            continue
        if site.tagged is None:
            parts = [(a, b, prog, lane) for a, b, prog, lane in site.bounds]
        else:
            parts = [
                (a.reshape(-1), b.reshape(-1), np.broadcast_to(prog, a.shape).reshape(-1), None)
                for a, b, prog in site.tagged
            ]
        for a, b, prog, lane in parts:
            a, b = np.maximum(a, lo), np.minimum(b, hi)
            keep = a < b
            lanes = np.full(a.shape, -1, dtype=np.int64) if lane is None else lane
            key = prog * (1 << 24) + (lanes + 1) if by_lane else prog
            s.append(a[keep])
            e.append(b[keep])
            p.append(key[keep])
            k.append(np.full(int(keep.sum()), index))
    if not s:
        z = np.zeros(0, dtype=np.int64)
        return _Runs(z, z, z, z)
    return _merge_per_program(np.concatenate(s), np.concatenate(e), np.concatenate(p), np.concatenate(k))


def _possible(sites: list, lo: int, hi: int) -> tuple | None:
    """(element, (site, key), (site, key)) where footprints that are bounds let a plain store of one
    program meet a plain store or load of another, or two lanes of one store meet, for some values in
    the declared ranges; None when no data in the ranges can make them meet. Keys are
    program * 2**24 + lane + 1 (lane 0: the program as a whole). Accesses of one program at different
    sites are ordered by the program."""
    stores = _bound_runs(sites, "store", lo, hi, by_lane=False)
    found = _first_overlap(stores)
    if found is None:
        found = _store_meets_load(stores, _bound_runs(sites, "load", lo, hi, by_lane=False))
    if found is not None:
        element, (a, pa), (b, pb) = found
        return element, (a, pa * (1 << 24)), (b, pb * (1 << 24))
    for site in sites:
        if site.op == "store" and site.tagged is None:
            lanes = _bound_runs([site], "store", lo, hi, by_lane=True)
            found = _first_overlap(lanes)
            if found is not None:
                element, (_, ka), (_, kb) = found
                index = sites.index(site)
                return element, (index, ka), (index, kb)
    return None


def _between_lanes(found: tuple) -> bool:
    """Whether a meeting `_possible` found is two lanes of one store of one program."""
    _, (a_site, a_key), (b_site, b_key) = found
    return a_site == b_site and a_key >> 24 == b_key >> 24


def _first_overlap(runs: _Runs) -> tuple | None:
    """Runs merged per key overlap only across keys: the first such pair."""
    if runs.starts.size < 2:
        return None
    reach = np.maximum.accumulate(runs.ends)
    hit = np.flatnonzero(reach[:-1] > runs.starts[1:])
    if not hit.size:
        return None
    i = int(hit[0]) + 1
    j = int(np.argmax(runs.ends[:i]))
    return (int(runs.starts[i]), (int(runs.sites[j]), int(runs.progs[j])), (int(runs.sites[i]), int(runs.progs[i])))


def _range_names(analysis: LaunchAnalysis, site) -> list[str]:
    """The declared-range tensors of the launch (which one made this site's address is not kept)."""
    return [name for name, view in analysis.views.items() if getattr(view, "values", None)]


def _lane_text(lane: tuple) -> str:
    return "[" + ", ".join(map(str, lane)) + "]"


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _programs_disjoint(sites: list) -> bool:
    """Every program touches only its own elements: the sites' footprints are Σ coef·x over the program's
    coordinates x plus a span of width w, with the same coefficients, every coordinate present, and the
    coefficients spread at least w apart (sorted, each past the reach of the smaller ones plus w), so
    two different programs' spans never meet."""
    first = sites[0].per_program
    if any(s.per_program.k != first.k for s in sites):
        return False
    present = {x for x, _, _ in first.k}
    if any(leaf not in present for leaf in first.leaves):
        return False  # a coordinate the address ignores: programs that share their footprint
    width = max(s.per_program.hi for s in sites) - min(s.per_program.lo for s in sites) + 1
    return radix_apart([(abs(c), n) for _, c, n in first.k if n > 1], width) or _residues_disjoint(sites)


def _residues_disjoint(sites: list) -> bool:
    """The same, per value of a remainder coordinate r the spans were bounded by (a loop of `pid % 6`
    trips: the programs with remainder r0 touch coef_r·r0 + [lo, hi] past the other coordinates' part):
    when those intervals are pairwise disjoint and the other coordinates spread at least their hull
    apart, two programs meet neither with the same other coordinates nor with different ones."""
    found = [s.per_program.residues for s in sites]
    if any(r is None for r in found) or len({r[0] for r in found}) != 1:
        return False
    name = found[0][0]
    k = sites[0].per_program.k
    coef = next((c for x, c, _ in k if x == name), None)
    spans: dict[int, tuple[int, int]] = {}
    for _, items in found:
        for r0, lo, hi in items:
            old = spans.get(r0, (lo, hi))
            spans[r0] = (min(old[0], lo), max(old[1], hi))
    if coef is None or not spans:
        return False
    ivs = sorted((coef * r0 + lo, coef * r0 + hi) for r0, (lo, hi) in spans.items())
    if any(b[0] <= a[1] for a, b in zip(ivs, ivs[1:])):
        return False
    rest = [(abs(c), n) for x, c, n in k if x != name and n > 1]
    return radix_apart(rest, ivs[-1][1] - min(lo for lo, _ in ivs) + 1)


def _union(sites: list, op: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The merged footprint of these sites inside [lo, hi) (the sites' own intervals, already few)."""
    starts, ends = [], []
    for site in sites:
        if site.op == op:
            s, e = site.intervals()
            s, e = np.maximum(s, lo), np.minimum(e, hi)
            keep = s < e
            if keep.any():
                starts.append(s[keep])
                ends.append(e[keep])
    return merge_intervals(starts, ends)  # (empty arrays when no site touches the storage)


def _lone_store_apart(sites: list, lo: int, hi: int) -> bool:
    """No race, without per-program runs: the argument's one store is exact and its address form keeps
    programs apart (`programs_apart`), and no load of the argument meets what it stores."""
    stores = [s for s in sites if s.op == "store"]
    if len(stores) != 1 or not stores[0].programs_apart or not stores[0].exact or stores[0].races_unchecked:
        return False
    return not _loads_meet_stores(sites, lo, hi)


def _loads_meet_stores(sites: list, lo: int, hi: int) -> bool:
    """Some element inside [lo, hi) is both loaded and stored by these sites (by any programs)."""
    s_starts, s_ends = _union(sites, "store", lo, hi)
    l_starts, l_ends = _union(sites, "load", lo, hi)
    if not l_starts.size or not s_starts.size:
        return False
    # a load interval meets the stores when some store interval starts before its end and ends after its start
    first = np.searchsorted(s_ends, l_starts, side="right")
    inside = first < s_starts.size
    return bool(inside.any() and (s_starts[np.minimum(first, s_starts.size - 1)] < l_ends)[inside].any())


def _cannot_race(sites: list, lo: int, hi: int) -> bool:
    """A quick proof there is no race: the stores' per-program runs add up to exactly their union (no
    element stored twice, by any program) and no load touches a stored element. Most kernels pass it,
    so their millions of per-program runs are never sorted."""
    s_starts, s_ends = _union(sites, "store", lo, hi)
    union = int((s_ends - s_starts).sum())
    total = 0
    for site in sites:
        if site.op == "store":
            for starts, ends, _ in site.tagged:
                total += int((np.minimum(ends, hi) - np.maximum(starts, lo)).clip(min=0).sum())
    return total == union and not _loads_meet_stores(sites, lo, hi)


def _site_of(sites: list, op: str, prog: int, element: int, default: int) -> int:
    for index, site in enumerate(sites):
        if site.op != op:
            continue
        for starts, ends, progs in site.tagged:
            p = np.broadcast_to(progs, starts.shape)
            if ((starts <= element) & (element < ends) & (p == prog)).any():
                return index
    return default


def _runs(sites: list, op: str, lo: int, hi: int) -> _Runs:
    """Within the storage [lo, hi) only: an element outside it is an out-of-bounds access already."""
    s, e, p, k = [], [], [], []
    for index, site in enumerate(sites):
        if site.op != op:
            continue
        for starts, ends, progs in site.tagged:
            a = np.maximum(starts.reshape(-1), lo)
            b = np.minimum(ends.reshape(-1), hi)
            keep = a < b
            s.append(a[keep])
            e.append(b[keep])
            p.append(np.broadcast_to(progs, starts.shape).reshape(-1)[keep])
            k.append(np.full(int(keep.sum()), index))
    if not s:
        z = np.zeros(0, dtype=np.int64)
        return _Runs(z, z, z, z)
    return _merge_per_program(np.concatenate(s), np.concatenate(e), np.concatenate(p), np.concatenate(k))


def _merge_per_program(s: np.ndarray, e: np.ndarray, p: np.ndarray, k: np.ndarray) -> _Runs:
    """Overlapping or adjacent runs of one program become one (a program may touch an element twice)."""
    order = np.lexsort((s, p))
    s, e, p, k = s[order], e[order], p[order], k[order]
    new_group = np.ones(s.size, dtype=bool)
    new_group[1:] = p[1:] != p[:-1]
    # running max of ends within each program: offset every program's values past the previous ones
    base = s.min() if s.size else 0
    span = int(e.max() - base) + 1 if s.size else 1
    group = np.cumsum(new_group) - 1
    if group.size and int(group[-1]) * span < (1 << 62):
        shifted = (e - base) + group * span
        reach = np.maximum.accumulate(shifted) - group * span + base
    else:  # too many programs over too wide a range for one pass: per program
        reach = e.copy()
        for g in np.flatnonzero(new_group):
            end = g + 1
            while end < s.size and not new_group[end]:
                end += 1
            reach[g:end] = np.maximum.accumulate(e[g:end])
    start_run = new_group.copy()
    start_run[1:] |= s[1:] > reach[:-1]
    first = np.flatnonzero(start_run)
    last = np.concatenate((first[1:] - 1, [s.size - 1])) if first.size else first
    runs = _Runs(s[first], reach[last], p[first], k[first])
    order = np.argsort(runs.starts, kind="stable")
    return _Runs(runs.starts[order], runs.ends[order], runs.progs[order], runs.sites[order])


def _find(sites: list, lo: int, hi: int) -> tuple | None:
    """(element, (site, program), (site, program)) of the first race found, or None."""
    stores = _runs(sites, "store", lo, hi)
    if stores.starts.size > 1:
        # runs of one program are disjoint after merging: any overlap is between two programs
        reach = np.maximum.accumulate(stores.ends)
        hit = np.flatnonzero(stores.starts[1:] < reach[:-1])
        if hit.size:
            i = int(hit[0]) + 1
            j = int(np.argmax(stores.ends[:i]))  # the earlier run that reaches past this start
            return (
                int(stores.starts[i]),
                (int(stores.sites[j]), int(stores.progs[j])),
                (int(stores.sites[i]), int(stores.progs[i])),
            )
    return _store_meets_load(stores, _runs(sites, "load", lo, hi))


def _store_meets_load(stores: _Runs, loads: _Runs) -> tuple | None:
    """The first load run meeting a store run of another program (the store runs are disjoint)."""
    if not loads.starts.size or not stores.starts.size:
        return None
    # stores are disjoint now: those overlapping a load [a, b) are a contiguous slice
    lo = np.searchsorted(stores.ends, loads.starts, side="right")
    hi = np.searchsorted(stores.starts, loads.ends, side="left")
    run_id = np.concatenate(([0], np.cumsum(stores.progs[1:] != stores.progs[:-1])))
    some = hi > lo
    safe_lo, safe_hi = np.minimum(lo, stores.starts.size - 1), np.maximum(hi - 1, 0)
    same = (run_id[safe_lo] == run_id[safe_hi]) & (stores.progs[safe_lo] == loads.progs)
    bad = np.flatnonzero(some & ~same)
    if not bad.size:
        return None
    i = int(bad[0])
    for j in range(int(lo[i]), int(hi[i])):
        if stores.progs[j] != loads.progs[i]:
            element = max(int(loads.starts[i]), int(stores.starts[j]))
            return (element, (int(stores.sites[j]), int(stores.progs[j])), (int(loads.sites[i]), int(loads.progs[i])))
    return None
