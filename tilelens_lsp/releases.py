"""The one place that lists the Triton releases tilelens-lsp is tested against.

Any other release is refused (TL040, exit 2) unless TILELENS_IR_ALLOW_UNTESTED_TRITON=1: `gate` is
that decision, the one the server and the CLI's `check` and `suggest` take from the worker's handshake.
"""

from __future__ import annotations

import os

from tilelens_lsp.model import Diagnostic

TESTED_RELEASES: tuple[str, ...] = ("3.6", "3.7", "3.8", "3.9")
ALLOW_ENV = "TILELENS_IR_ALLOW_UNTESTED_TRITON"


def release_of(version: str) -> str:
    """`3.8.0` → `3.8`; the gate is per minor release, patch releases share it."""
    parts = version.split("+")[0].split(".")
    return ".".join(parts[:2])


def is_tested(version: str) -> bool:
    return release_of(version) in TESTED_RELEASES


def untested_allowed() -> bool:
    return os.environ.get(ALLOW_ENV, "") not in ("", "0", "false", "no")


def gate_message(version: str) -> str:
    tested = ", ".join(TESTED_RELEASES)
    return f"Triton {version} is not a tested release (tested: {tested}); set {ALLOW_ENV}=1 to analyse anyway"


def gate(version: str) -> Diagnostic | None:
    """The TL040 that refuses Triton `version`, or None when it is tested or untested releases are allowed."""
    if is_tested(version) or untested_allowed():
        return None
    return Diagnostic("TL040", gate_message(version), 1, 1)
