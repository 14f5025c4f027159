"""The enumerating engine: every program of a launch evaluated lane by lane, loop iteration by iteration.

In: `values.LaunchModel`. Out: `AccessGraph` with `sites`, `width_obligations()`, `truncated` and
`unreachable`. `graph` drives the evaluation, `arith`, `memory` and `control` register their op
handlers in `table.HANDLERS`, `recording` turns accesses into element intervals and witnesses,
`address_slice` decides which integer ops carry width obligations. Importing the package registers
every handler.
"""

from tilelens_lsp.engines.enumerate import arith, control, descriptors, memory  # importing registers their handlers
from tilelens_lsp.engines.enumerate.graph import AccessGraph

__all__ = ["AccessGraph", "arith", "control", "descriptors", "memory"]
