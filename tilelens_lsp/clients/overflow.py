"""overflow: every width obligation in address arithmetic the launch violates (TL003)."""

from __future__ import annotations

from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis, frame_fields
from tilelens_lsp.model import Diagnostic, Witness


class OverflowClient(IRClient):
    name = "overflow"

    def run(self, analysis: LaunchAnalysis) -> ClientOutput:
        out = ClientOutput()
        seen: set[tuple] = set()
        for ob in analysis.obligations:
            v = ob.violation
            if v is None:
                continue
            stack = analysis.stack_of(ob.loc, ob.call_stack)
            where = frame_fields(stack)
            key = (where["path"], where["line"], where["column"])
            if key in seen:
                continue
            seen.add(key)
            lane = ", ".join(str(i) for i in v["lane"]) or "scalar"
            it = v["iteration"]
            when = f", loop iteration {', '.join(map(str, it))}" if it else ""
            if v.get("loaded"):
                when += f", when {v['loaded'][0]} holds {v['loaded'][1]}"
            op = ob.op.split(".")[-1].rstrip("i")
            message = (
                f"i{ob.bits} overflow in address arithmetic: {op} gives {v['value']} "
                f"(program {tuple(v['pid'])}, lane [{lane}]{when}), outside "
                f"[{-(1 << (ob.bits - 1))}, {(1 << (ob.bits - 1)) - 1}]; compute it in 64 bits "
                f"(e.g. .to(tl.int64)) or check the sizes"
            )
            out.diagnostics.append(
                Diagnostic(
                    code="TL003",
                    message=message,
                    line=where["line"],
                    column=where["column"],
                    stack=stack,
                    witness=Witness(tuple(v["pid"]), tuple(v["lane"]), tuple(it) if it else None, None, v["value"]),
                    kind=self.name,
                )
            )
        return out
