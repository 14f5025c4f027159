"""view: an access inside its argument's storage but outside the elements the declared view covers
(TL004). Memory-safe, so no sanitizer sees it, but it reads or writes a neighbour's data: a slice of
a bigger tensor read past its own extent."""

from __future__ import annotations

from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis, frame_fields
from tilelens_lsp.model import Diagnostic, Witness


class ViewClient(IRClient):
    name = "view"

    def run(self, analysis: LaunchAnalysis) -> ClientOutput:
        out = ClientOutput()
        for site in analysis.sites:
            hit = site.view_out
            if hit is None or site.arg not in analysis.args:
                continue
            stack = analysis.stack_of(site.loc, site.call_stack)
            where = frame_fields(stack)
            view = analysis.views.get(site.arg)
            lane = ", ".join(str(i) for i in hit["lane"]) or "scalar"
            it = hit["iteration"]
            when = f", loop iteration {', '.join(map(str, it))}" if it else ""
            verb = {"load": "reads", "store": "writes", "atomic": "updates"}[site.op]
            described = (
                (
                    f"view {view.dtype}{list(view.shape)} with strides {list(view.strides)}, offset "
                    f"{view.offset}, in a storage of {view.storage}"
                )
                if view
                else "its view"
            )
            maybe = "" if site.exact and hit.get("exact", True) else "possibly "
            out.diagnostics.append(
                Diagnostic(
                    code="TL004",
                    message=(
                        f"{site.op} outside its view: program {tuple(hit['pid'])}, lane [{lane}]{when} {maybe}"
                        f"{verb} element {hit['element']} of {site.arg}, inside the storage but not one of the "
                        f"elements its {described} covers (a neighbour's data)"
                    ),
                    line=where["line"],
                    column=where["column"],
                    stack=stack,
                    witness=Witness(tuple(hit["pid"]), tuple(hit["lane"]), tuple(it) if it else None, hit["element"]),
                    kind=self.name,
                )
            )
        return out
