"""The affine summary engine: exact footprints of a whole launch without enumerating lanes or iterations.

In: `values.LaunchModel`. Out: `AffineGraph` with the same results as the enumeration (`sites`,
`width_obligations()`, `truncated`, `unreachable`), or `NotAffine` when the launch leaves the fragment
(and `OutOfBoundsFound` at its first out-of-bounds site, where `stop_at_oob` asks for it).
`forms` holds the values, `handlers` and `control` the op handlers, `footprints` and `box` turn
accesses into element intervals. Importing the package registers every handler.
"""

from tilelens_lsp.engines.affine import control, handlers  # importing them registers their handlers
from tilelens_lsp.engines.affine.footprints import OutOfBoundsFound
from tilelens_lsp.engines.affine.forms import NotAffine
from tilelens_lsp.engines.affine.summary import AffineGraph

__all__ = ["AffineGraph", "NotAffine", "OutOfBoundsFound", "control", "handlers"]
