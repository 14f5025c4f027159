"""sanitizer: out-of-bounds against the argument's storage (TL001 definite, TL002 possible)."""

from __future__ import annotations

from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis, frame_fields
from tilelens_lsp.model import Diagnostic, Witness, format_values


class SanitizerClient(IRClient):
    name = "sanitizer"

    def run(self, analysis: LaunchAnalysis) -> ClientOutput:
        out = ClientOutput()
        for site in analysis.sites:
            if site.oob is None or site.arg not in analysis.args:
                continue
            stack = analysis.stack_of(site.loc, site.call_stack)
            where = frame_fields(stack)
            info = analysis.args[site.arg]
            oob = site.oob
            # a bound's witness is definite only when a concrete evaluation of its program confirmed it
            definite = oob.get("exact", True) and (site.exact or oob.get("confirmed", False))
            view = analysis.views.get(site.arg)
            size = f"{info.hi} elements" if info.lo == 0 else f"elements {info.lo}..{info.hi - 1}"
            lane = ", ".join(str(i) for i in oob["lane"]) or "scalar"
            it = oob["iteration"]
            when = f", loop iteration {', '.join(map(str, it))}" if it else ""
            verb = {"load": "reads", "store": "writes", "atomic": "updates"}[site.op]
            shape = f" (view {view.dtype}{list(view.shape)})" if view else ""
            index = ""
            if oob.get("value") is not None:  # an address from a declared-range index
                declared = analysis.views.get(oob.get("index") or "")
                rng = (
                    f", declared values {format_values(declared.values)}" if declared is not None and declared.values else ""
                )
                index = f" when {oob.get('index')} holds {oob['value']}{rng},"
            message = (
                f"{'out-of-bounds' if definite else 'possible out-of-bounds'} {site.op}: "
                f"program {tuple(oob['pid'])}, lane [{lane}]{when}{index} {verb} element {oob['element']} "
                f"of {site.arg}, whose storage holds {size}{shape}"
            )
            out.diagnostics.append(
                Diagnostic(
                    code="TL001" if definite else "TL002",
                    message=message,
                    line=where["line"],
                    column=where["column"],
                    stack=stack,
                    witness=Witness(
                        tuple(oob["pid"]), tuple(oob["lane"]), tuple(it) if it else None, oob["element"], oob.get("value")
                    ),
                    kind=self.name,
                )
            )
        return out
