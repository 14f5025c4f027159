"""footprint: the elements of its pointer argument each access touches over the whole launch."""

from __future__ import annotations

import numpy as np

from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis, frame_fields
from tilelens_lsp.engines.values import merge_intervals
from tilelens_lsp.model import Access

MAX_SPANS = 4096  # intervals one reported footprint keeps; past it, the smallest gaps are closed


def coarsen(starts: np.ndarray, ends: np.ndarray, limit: int = MAX_SPANS) -> tuple[np.ndarray, np.ndarray]:
    """At most `limit` intervals covering the given ones: the largest gaps stay, the rest close. A
    launch over billions of elements can touch millions of runs (a wrapped row offset, a strided
    scatter); its reported footprint stays small and becomes a proven bound."""
    if starts.size <= limit:
        return starts, ends
    gaps = starts[1:] - ends[:-1]
    keep = np.sort(np.argsort(gaps, kind="stable")[gaps.size - (limit - 1) :])
    return np.concatenate((starts[:1], starts[keep + 1])), np.concatenate((ends[keep], ends[-1:]))


class FootprintClient(IRClient):
    name = "footprint"

    def run(self, analysis: LaunchAnalysis) -> ClientOutput:
        merged: dict[tuple, dict] = {}
        for site in analysis.sites:
            if site.refusal is not None or site.arg not in analysis.args:
                continue
            stack = analysis.stack_of(site.loc, site.call_stack)
            where = frame_fields(stack)
            key = (site.op, where["path"], where["line"], site.arg)
            entry = merged.setdefault(key, {"where": where, "starts": [], "ends": [], "exact": True, "oob": False})
            entry["starts"] += site.starts
            entry["ends"] += site.ends
            entry["exact"] &= site.exact
            entry["oob"] |= site.oob is not None
        out = ClientOutput()
        for (op, path, line, arg), entry in sorted(merged.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0], kv[0][3])):
            starts, ends = merge_intervals(entry["starts"], entry["ends"])
            touched = int((ends - starts).sum())
            bound_s, bound_e = coarsen(starts, ends)
            exact = entry["exact"] and bound_s.size == starts.size
            spans = tuple(zip(bound_s.tolist(), bound_e.tolist()))
            info = analysis.args[arg]
            view = analysis.views.get(arg)
            out.accesses.append(
                Access(
                    op=op,
                    line=line,
                    column=entry["where"]["column"],
                    pointer=arg,
                    dtype=view.dtype if view else "",
                    exact=exact,
                    elements=spans,
                    in_bounds=not entry["oob"],
                    path=path,
                    view_numel=view.numel if view else 0,
                    storage=info.hi,
                    view_offset=-info.lo,
                    element_size=info.elem_size,
                    touched=touched,
                    contiguous=starts.size <= 1,
                    view_shape=tuple(view.shape) if view else (),
                    view_strides=tuple(view.strides) if view else (),
                )
            )
        return out
