"""Possible out-of-bounds accesses through loaded data, shown at one declared value.

An address built from a declared-range index by more than one path (a paged cache's block `slot //
16` and offset `slot % 16`) is bounded by interval arithmetic: the bound's end is no address any
single value gives, and the range loses which value leads there. The witness read "program 0 writes
element 983055360", true of no data. Here the witness program is evaluated again with every element
of the launch's one declared tensor pinned to an end of its range; where every lane of that
evaluation touches one element and one still leaves the storage, the witness becomes its own:
"when slot_mapping holds 960000, writes element 983040000", a fact of that data. It stays a
possible out-of-bounds (TL002): the data is the caller's. Nothing else about the launch changes.

The same evaluation, of two programs at one declared value, decides a store through loaded data that
the grid engine bounds over every program at once: where both store one element, some data in the
declared ranges makes them meet (TL006, as the enumeration of a smaller launch says), shown by that
data; where they do not, the race note stands.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.engines.values import ArgInfo, LaunchModel, SiteResult, merge_intervals
from tilelens_lsp.refusal import Refusal

PIN_SHARE = 16  # of the launch's budget, for each pinned evaluation


def show_at_declared_values(model: LaunchModel, sites: dict[tuple, SiteResult]) -> None:
    """Give each possible out-of-bounds site whose witness names no loaded value the witness of its
    program evaluated with the declared tensor pinned to its highest, else its lowest, value."""
    declared = [info for info in model.args.values() if info.values]
    if len(declared) != 1:
        return  # one tensor's values: the witness names which value of which tensor
    todo = {
        key: site
        for key, site in sites.items()
        if site.oob is not None
        and not site.exact
        and site.oob.get("value") is None
        and not site.oob.get("confirmed", False)
        and site.refusal is None
    }
    by_program: dict[int, list[tuple]] = {}
    for key, site in todo.items():
        by_program.setdefault(model.program_index(*site.oob["pid"]), []).append(key)  # type: ignore[index]
    (info,) = declared
    assert info.values is not None
    ends = dict.fromkeys((info.values[-1][1] - 1, info.values[0][0]))  # highest first
    for program, keys in sorted(by_program.items()):
        for value in ends:
            shown = _evaluate(model, info, value, program, keys)
            for key in [k for k in keys if k in shown]:
                oob = dict(shown[key])
                oob.update(value=value, index=info.name, exact=False, confirmed=False)
                sites[key].oob = oob
                keys.remove(key)
            if not keys:
                break


def show_meeting_stores(model: LaunchModel, sites: dict[tuple, SiteResult]) -> None:
    """For each store whose races were left unchecked (an address through loaded data that the grid
    engine bounds over every program, or footprints past what the race check keeps), the first
    element programs 0 and 1 both store with every element of the launch's one declared tensor at the
    top, the middle or the bottom of its range, inside the argument's storage (`SiteResult.meets`)."""
    declared = [info for info in model.args.values() if info.values]
    gx, gy, gz = model.grid
    keys = [
        key
        for key, site in sites.items()
        if site.op == "store" and site.races_unchecked and site.per_program is None and site.refusal is None
    ]
    if len(declared) != 1 or not keys or gx * gy * gz < 2:
        return
    (info,) = declared
    assert info.values is not None
    top, bottom = info.values[-1][1] - 1, info.values[0][0]
    for value in dict.fromkeys((top, (top + bottom) // 2, bottom)):
        graph = _run(model, info, value, 0, 2, None)
        if graph is None:
            continue
        for key in [k for k in keys if k in graph.sites]:
            element = shared_element(graph.sites[key], model.args[sites[key].arg])
            if element is not None:
                sites[key].meets = (element, 0, 1, value, info.name)
                keys.remove(key)
        if not keys:
            return


def shared_element(site: SiteResult, storage: ArgInfo) -> int | None:
    """The lowest element of the argument's storage that programs 0 and 1 both store at this site, from
    a run of those two programs where every lane touched one element; None where they share none or a
    lane's element is a bound."""
    if not one_element_per_lane(site):
        return None
    runs: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {0: ([], []), 1: ([], [])}
    if site.tagged:
        parts = [(a.reshape(-1), b.reshape(-1), np.broadcast_to(prog, a.shape).reshape(-1)) for a, b, prog in site.tagged]
    else:
        parts = [(lo, hi, prog) for lo, hi, prog, _ in site.bounds or []]
    for a, b, prog in parts:
        for p in (0, 1):
            if (prog == p).any():
                runs[p][0].append(a[prog == p])
                runs[p][1].append(b[prog == p])
    if not runs[0][0] or not runs[1][0]:
        return None  # one of the two stores nothing here
    (s0, e0), (s1, e1) = (merge_intervals(*runs[p]) for p in (0, 1))
    s0, e0, s1, e1 = (
        np.maximum(s0, storage.lo),
        np.minimum(e0, storage.hi),
        np.maximum(s1, storage.lo),
        np.minimum(e1, storage.hi),
    )
    # the first pair of [s, e) runs that overlap: sorted, disjoint runs on each side
    i = j = 0
    while i < s0.size and j < s1.size:
        lo, hi = max(s0[i], s1[j]), min(e0[i], e1[j])
        if lo < hi:
            return int(lo)
        if e0[i] <= e1[j]:
            i += 1
        else:
            j += 1
    return None


def _run(
    model: LaunchModel, info: ArgInfo, value: int, start: int, count: int, until: frozenset[tuple] | None
) -> AccessGraph | None:
    """Programs start..start+count-1 evaluated with every element of `info`'s tensor equal to `value`;
    None where the evaluation is refused."""
    args = dict(model.args)
    args[info.name] = dataclasses.replace(info, values=((value, value + 1),))
    pinned = dataclasses.replace(model, args=args, budget=max(1, model.budget // PIN_SHARE))
    graph = AccessGraph(pinned)
    try:
        graph.run_programs(start, count, until=until)
    except (Refusal, RecursionError, MemoryError, ValueError, OverflowError, ArithmeticError):
        return None
    return graph


def _evaluate(model: LaunchModel, info: ArgInfo, value: int, program: int, keys: list[tuple]) -> dict[tuple, Any]:
    """The out-of-bounds records of `keys` that `program` shows exactly with every element of `info`'s
    tensor equal to `value`; none where the evaluation is refused."""
    graph = _run(model, info, value, program, 1, frozenset(keys))
    if graph is None:
        return {}
    out = {}
    for key in keys:
        real = graph.sites.get(key)
        if real is not None and real.oob is not None and one_element_per_lane(real):
            out[key] = real.oob
    return out


def one_element_per_lane(site: SiteResult) -> bool:
    """Every lane of the site touched one element: its address is a value of the data, not a bound."""
    if site.exact:  # every lane's address and mask were values, never a bound
        return True
    if not site.bounds:  # a segment between loaded offsets, or bounds dropped past their budget
        return False
    return all(bool(((hi - lo) == 1).all()) for lo, hi, _, _ in site.bounds)
