"""What a warm worker keeps between requests: the result cache, the counters it reports, the user's
modules it imported and the directives it parsed.

The worker (`worker/main.py`) creates one `WarmState` and passes it to every analysis; a test or a
tool builds its own, so nothing of one caller's reaches another's through this package. It holds
state only: what is reused, and when, is decided where the state is used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from tilelens_lsp.cache import ResultCache
from tilelens_lsp.pipeline.directives import Directives
from tilelens_lsp.pipeline.imports import Imports


@dataclass
class Stats:
    """Counters of one worker's life (the `stats` reply)."""

    compiles: int = 0
    cache_hits: int = 0
    summarized: int = 0  # launch configs the affine summary answered
    enumerated: int = 0  # ... and those the enumeration (or the grid engine) answered

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class WarmState:
    """One worker's memory: results, counters, imports, parsed directives."""

    cache: ResultCache = field(default_factory=ResultCache)
    stats: Stats = field(default_factory=Stats)
    imports: Imports = field(default_factory=Imports)
    directives: Directives = field(default_factory=Directives)

    def clear_cache(self) -> None:
        """Forget the results kept in memory (every launch is evaluated afresh)."""
        self.cache = ResultCache()
