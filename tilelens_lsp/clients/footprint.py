"""footprint: the elements of its pointer argument each access touches over the whole launch."""

from __future__ import annotations

from tilelens_lsp.graph import merge_intervals
from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis, frame_fields
from tilelens_lsp.model import Access


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
            entry = merged.setdefault(key, {"where": where, "starts": [], "ends": [], "exact": True,
                                            "oob": False})
            entry["starts"] += site.starts
            entry["ends"] += site.ends
            entry["exact"] &= site.exact
            entry["oob"] |= site.oob is not None
        out = ClientOutput()
        for (op, path, line, arg), entry in sorted(merged.items(), key=lambda kv: (kv[0][2], kv[0][1],
                                                                                   kv[0][0], kv[0][3])):
            starts, ends = merge_intervals(entry["starts"], entry["ends"])
            spans = tuple((int(a), int(b)) for a, b in zip(starts, ends))
            info = analysis.args[arg]
            view = analysis.views.get(arg)
            out.accesses.append(Access(
                op=op, line=line, column=entry["where"]["column"], pointer=arg,
                dtype=view.dtype if view else "", exact=entry["exact"], elements=spans,
                in_bounds=not entry["oob"], path=path,
                view_numel=view.numel if view else 0, storage=info.hi, view_offset=-info.lo,
                element_size=info.elem_size, touched=int((ends - starts).sum()), contiguous=len(spans) <= 1,
                view_shape=tuple(view.shape) if view else (), view_strides=tuple(view.strides) if view else ()))
        return out
