"""Possible out-of-bounds accesses through loaded data, shown at one declared value.

An address built from a declared-range index by more than one path (a paged cache's block `slot //
16` and offset `slot % 16`) is bounded by interval arithmetic: the bound's end is no address any
single value gives, and the range loses which value leads there. The witness read "program 0 writes
element 983055360", true of no data. Here the witness program is evaluated again with every element
of the launch's one declared tensor pinned to an end of its range; where that evaluation is exact
and still leaves the storage, the witness becomes its own: "when slot_mapping holds 960000, writes
element 983040000", a fact of that data. It stays a possible out-of-bounds (TL002): the data is the
caller's. Nothing else about the launch changes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.engines.values import ArgInfo, LaunchModel, SiteResult
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
        by_program.setdefault(_linear(model, site.oob["pid"]), []).append(key)  # type: ignore[index]
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


def _evaluate(model: LaunchModel, info: ArgInfo, value: int, program: int, keys: list[tuple]) -> dict[tuple, Any]:
    """The out-of-bounds records of `keys` that `program` shows exactly with every element of `info`'s
    tensor equal to `value`; none where the evaluation is refused."""
    args = dict(model.args)
    args[info.name] = dataclasses.replace(info, values=((value, value + 1),))
    pinned = dataclasses.replace(model, args=args, budget=max(1, model.budget // PIN_SHARE))
    graph = AccessGraph(pinned)
    try:
        graph.run_programs(program, 1, until=frozenset(keys))
    except (Refusal, RecursionError, MemoryError, ValueError, OverflowError, ArithmeticError):
        return {}
    out = {}
    for key in keys:
        real = graph.sites.get(key)
        if real is not None and real.oob is not None and _one_element_per_lane(real):
            out[key] = real.oob
    return out


def _one_element_per_lane(site: SiteResult) -> bool:
    """Every lane of the site touched one element: its address is a value of the data, not a bound."""
    if site.exact and site.oob is not None and site.oob.get("exact", True):
        return True
    if not site.bounds:  # a segment between loaded offsets, or bounds dropped past their budget
        return False
    return all(bool(((hi - lo) == 1).all()) for lo, hi, _, _ in site.bounds)


def _linear(model: LaunchModel, pid: tuple[int, int, int]) -> int:
    gx, gy, _ = model.grid
    return int(pid[0]) + gx * (int(pid[1]) + gy * int(pid[2]))
