"""One typed settings record, merged once at the boundary from defaults, toml, environment and client.

Client settings arrive camelCase (`workerTimeout`); they map onto snake_case fields here and nowhere
else. The rest of the code receives a `Settings`, never a raw dict.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, fields, replace
from typing import Any

DEFAULT_TARGET = "cuda:89"
MAX_FILE_BYTES = 8 * 1024 * 1024  # a larger file is not analysed, by `check` or the server: a TL010 says so
# every IR client, in the order they run; clients/__init__.py refuses to import unless its registry
# (`clients.CLIENTS`, keyed by each client class's `name`) has exactly these names
ALL_CLIENTS = ("footprint", "sanitizer", "overflow", "view", "race")
_TARGET_RE = re.compile(r"^(cuda|hip):(\w+)$")


@dataclass(frozen=True)
class Settings:
    target: str = DEFAULT_TARGET
    timeout: float = 30.0  # seconds per config of a launch (and per import) in the worker
    interpreter: str = field(default_factory=lambda: sys.executable)
    clients: tuple[str, ...] = ALL_CLIENTS
    memory_limit_mb: int = 4096  # address-space limit of a worker
    allow_outside_workspace: bool = False  # import documents outside the workspace folders
    # elements evaluated (values computed, rows or lanes recorded) before a launch is refused as too large
    enumeration_budget: int = 1 << 28
    target_pinned: bool = False  # the caller decided the target: a toml's `target` no longer applies


_CAMEL = {
    "workerTimeout": "timeout",
    "timeout": "timeout",
    "target": "target",
    "interpreter": "interpreter",
    "pythonPath": "interpreter",
    "clients": "clients",
    "memoryLimitMb": "memory_limit_mb",
    "memoryLimit": "memory_limit_mb",
    "allowOutsideWorkspace": "allow_outside_workspace",
    "enumerationBudget": "enumeration_budget",
}


def check_target(target: str) -> str:
    """Raise ValueError unless `target` reads like `cuda:89` or `hip:gfx942`."""
    if not _TARGET_RE.match(target):
        raise ValueError(f"bad target {target!r}: expected BACKEND:ARCH such as cuda:89 or hip:gfx942")
    return target


def merge(base: Settings, values: dict[str, Any] | None) -> Settings:
    """Overlay client or toml values (camelCase or snake_case) onto `base`, ignoring unknown keys."""
    if not values:
        return base
    names = {f.name for f in fields(Settings)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        name = _CAMEL.get(key, key)
        if name not in names or value is None or value == "":
            continue
        if name == "clients":
            if isinstance(value, dict):  # {"overflow": false, ...}
                value = tuple(c for c in ALL_CLIENTS if value.get(c, c in base.clients))
            else:
                value = tuple(c for c in value if c in ALL_CLIENTS)
        elif name == "target":
            value = check_target(str(value))
        elif name in ("timeout",):
            value = float(value)
        elif name in ("memory_limit_mb", "enumeration_budget"):
            value = int(value)
        elif name in ("allow_outside_workspace", "target_pinned"):
            value = bool(value)
        changes[name] = value
    return replace(base, **changes)


def from_environment(base: Settings | None = None) -> Settings:
    base = base or Settings()
    target = os.environ.get("TILELENS_IR_TARGET")
    budget = os.environ.get("TILELENS_ENUMERATION_BUDGET", "").replace("_", "")
    return merge(base, {"target": target, "enumeration_budget": int(budget) if budget.isdigit() else None})
