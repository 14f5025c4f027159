"""IR clients: each turns one launch's analysis into accesses and verdicts.

New clients (uncoalesced access, ...) plug in by adding a module, its class in `_CLASSES`, and its
name in `settings.ALL_CLIENTS` (checked at import).
"""

from __future__ import annotations

from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis
from tilelens_lsp.clients.footprint import FootprintClient
from tilelens_lsp.clients.overflow import OverflowClient
from tilelens_lsp.clients.race import RaceClient
from tilelens_lsp.clients.sanitizer import SanitizerClient
from tilelens_lsp.clients.view import ViewClient
from tilelens_lsp.settings import ALL_CLIENTS

_CLASSES: tuple[type[IRClient], ...] = (FootprintClient, SanitizerClient, OverflowClient, ViewClient, RaceClient)

# The registry, keyed by each class's own `name`. `settings.ALL_CLIENTS` (the names a user may select,
# below this layer, so it cannot import it) must name exactly these, in this order: a client missing
# there would never run, so a mismatch fails every import of the clients rather than silently.
CLIENTS: dict[str, type[IRClient]] = {cls.name: cls for cls in _CLASSES}
if tuple(CLIENTS) != ALL_CLIENTS:  # pragma: no cover - a registration mistake, caught by any test run
    raise ImportError(f"settings.ALL_CLIENTS {ALL_CLIENTS} does not name the registered clients {tuple(CLIENTS)}")

__all__ = ["CLIENTS", "ClientOutput", "IRClient", "LaunchAnalysis"]
