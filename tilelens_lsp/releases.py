"""The one place that lists the Triton releases tilelens-lsp is tested against.

Any other release is refused (TL040, exit 2) unless TILELENS_IR_ALLOW_UNTESTED_TRITON=1.
"""

from __future__ import annotations

import os

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
    return (f"Triton {version} is not a tested release (tested: {tested}); "
            f"set {ALLOW_ENV}=1 to analyse anyway")
