"""`tilelens/stats` (a custom request): the worker's counters, the runs' counters and the settings in
use, read by the tests and the benchmarks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilelens_lsp.lsp.analysis import Analysis
    from tilelens_lsp.lsp.session import Session


def stats(session: "Session", analysis: "Analysis") -> dict[str, Any]:
    s = session.settings
    return {
        **analysis.stats(),
        **session.counters,
        "open_documents": len(session.docs),
        "settings": {"target": s.target, "timeout": s.timeout, "clients": list(s.clients), "interpreter": s.interpreter},
    }
