"""IR clients: each declares the IR stages it needs and turns one launch's analysis into verdicts.

New clients (uncoalesced access, ...) plug in by adding a module and an entry in `CLIENTS`.
"""

from __future__ import annotations

from tilelens_lsp.clients.base import ClientOutput, IRClient, LaunchAnalysis
from tilelens_lsp.clients.footprint import FootprintClient
from tilelens_lsp.clients.overflow import OverflowClient
from tilelens_lsp.clients.race import RaceClient
from tilelens_lsp.clients.sanitizer import SanitizerClient
from tilelens_lsp.clients.view import ViewClient

CLIENTS: dict[str, type[IRClient]] = {
    "footprint": FootprintClient,
    "sanitizer": SanitizerClient,
    "overflow": OverflowClient,
    "view": ViewClient,
    "race": RaceClient,
}

__all__ = ["CLIENTS", "ClientOutput", "IRClient", "LaunchAnalysis"]
