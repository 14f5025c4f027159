"""footprint: the elements of its pointer argument each access touches over the whole launch."""

from __future__ import annotations

import numpy as np

from tilelens_lsp.graph import sorted_unique
from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis, frame_fields
from tilelens_lsp.model import Access


def intervals(elements: np.ndarray) -> tuple[tuple[int, int], ...]:
    """Sorted unique element indices → sorted, disjoint, merged half-open intervals."""
    if elements.size == 0:
        return ()
    breaks = np.nonzero(np.diff(elements) != 1)[0]
    starts = np.concatenate(([elements[0]], elements[breaks + 1]))
    ends = np.concatenate((elements[breaks], [elements[-1]])) + 1
    return tuple((int(s), int(e)) for s, e in zip(starts, ends))


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
            entry = merged.setdefault(key, {"where": where, "chunks": [], "exact": True, "oob": False})
            entry["chunks"].append(site.elements())
            entry["exact"] &= site.exact
            entry["oob"] |= site.oob is not None
        out = ClientOutput()
        for (op, path, line, arg), entry in sorted(merged.items(), key=lambda kv: (kv[0][2], kv[0][1],
                                                                                   kv[0][0], kv[0][3])):
            elements = (entry["chunks"][0] if len(entry["chunks"]) == 1 else sorted_unique(np.concatenate(entry["chunks"]))) \
                if entry["chunks"] else np.zeros(0, np.int64)
            spans = intervals(elements)
            info = analysis.args[arg]
            view = analysis.views.get(arg)
            out.accesses.append(Access(
                op=op, line=line, column=entry["where"]["column"], pointer=arg,
                dtype=view.dtype if view else "", exact=entry["exact"], elements=spans,
                in_bounds=not entry["oob"], path=path,
                view_numel=view.numel if view else 0, storage=info.hi, view_offset=-info.lo,
                element_size=info.elem_size, touched=int(elements.size), contiguous=len(spans) <= 1,
                view_shape=tuple(view.shape) if view else (), view_strides=tuple(view.strides) if view else ()))
        return out
