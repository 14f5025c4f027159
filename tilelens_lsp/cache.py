"""Result cache: launch results by (kernel source + dependencies, launch, config, release, target).

In memory for the worker's life, and on disk in the user cache folder so a fresh worker starts warm.
Entries are written atomically (temp file + rename); an unreadable or corrupt entry is ignored.
Nothing is ever written into the workspace. A new entry reaches the disk when its owner `flush`es,
after the answer it belongs to went out: the write (a millisecond) is no part of a save's wait.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from tilelens_lsp.model import LaunchResult

SCHEMA = "v1"


def _code_hash() -> str:
    """A hash of this package's sources: results of another analysis version are never reused."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


CODE_HASH = _code_hash()


def cache_dir() -> Path | None:
    """`$TILELENS_CACHE_DIR`, else `$XDG_CACHE_HOME/tilelens-lsp`, else `~/.cache/tilelens-lsp`; '' or 'off' disables."""
    explicit = os.environ.get("TILELENS_CACHE_DIR")
    if explicit is not None:
        return None if explicit in ("", "off", "0") else Path(explicit) / SCHEMA
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tilelens-lsp" / SCHEMA


class ResultCache:
    def __init__(self) -> None:
        self.memory: dict[str, LaunchResult] = {}
        self.unwritten: list[str] = []  # keys put since the last `flush`, in order

    def _path(self, key: str) -> Path | None:
        root = cache_dir()
        return root / key[:2] / f"{key}.json" if root else None

    def get(self, key: str) -> LaunchResult | None:
        hit = self.memory.get(key)
        if hit is not None:
            return hit
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            result = LaunchResult.from_json(json.loads(path.read_text(encoding="utf-8")))
        except Exception:  # noqa: BLE001 - a corrupt entry is a miss, never an error
            return None
        self.memory[key] = result
        return result

    def put(self, key: str, result: LaunchResult) -> None:
        """Keep `result` in memory now; on disk at the next `flush`."""
        self.memory[key] = result
        self.unwritten.append(key)

    def flush(self) -> None:
        """Write every entry put since the last flush to disk (where the cache folder is on)."""
        keys, self.unwritten = self.unwritten, []
        for key in keys:
            self._write(key, self.memory[key])

    def _write(self, key: str, result: LaunchResult) -> None:
        path = self._path(key)
        if path is None:
            return
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(result.to_json(), f)
            os.replace(tmp, path)
            tmp = None
        except (OSError, TypeError, ValueError):
            pass  # a read-only or full cache folder (or an entry that cannot be replaced) only costs speed
        finally:
            if tmp is not None:  # never leave a partial entry behind
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
