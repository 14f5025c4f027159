"""What the server remembers: per document its generation, snapshot and published result; per run its inputs.

Plain records plus the small URI and task helpers they need. The rules for changing them
(generations, which run is stale) live in analysis/scheduler.py; nothing here talks to the client
or the worker.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Coroutine
from urllib.parse import unquote, urlparse

from tilelens_lsp.lsp import linemap
from tilelens_lsp.model import FileResult
from tilelens_lsp.paths import relative_posix
from tilelens_lsp.settings import MAX_FILE_BYTES, Settings

log = logging.getLogger("tilelens_lsp.server")

CONFIG_FILES = ("pyproject.toml", "tilelens.toml")


@dataclass
class Snapshot:
    """The text a generation analyses, followed through the unsaved edits since (linemap.py)."""

    generation: int
    tracked: linemap.Tracked
    label: str  # which version, e.g. "version 3, saved at 14:02:11"


@dataclass
class Published:
    """What the document's diagnostics and hovers currently come from."""

    generation: int
    result: FileResult
    text: str
    rel: str
    tracked: linemap.Tracked | None = None  # `text` → the document now
    label: str = "the last save"


@dataclass
class Doc:
    uri: str
    path: Path | None
    version: int | None = None
    generation: int = 0
    touched: float = 0.0  # monotonic time of the last open/save
    pending_since: float = 0.0
    burst: bool = False  # this save came within DEBOUNCE of the previous one
    published: Published | None = None
    snapshot: Snapshot | None = None
    too_large: bool = False  # over MAX_FILE_BYTES: not analysed, its edits not followed


def over_limit(text: str) -> bool:
    """Whether a document is larger than `check` reads (MAX_FILE_BYTES of UTF-8)."""
    return len(text) > MAX_FILE_BYTES or (len(text) > MAX_FILE_BYTES // 4 and len(text.encode("utf-8")) > MAX_FILE_BYTES)


@dataclass
class Run:
    """One analysis of one generation of one document."""

    uri: str
    generation: int
    version: int | None
    text: str
    path: Path
    root: Path
    rel: str
    settings: Settings
    started: float = 0.0
    started_ns: int = 0  # the wall clock at the start (file stamps are on it): what the worker read is older
    finished: bool = False
    cancelled: bool = False
    token: str | None = None


def stopped_at_import(result: FileResult) -> bool:
    """The file's analysis ended at its import (a TL010, no launch): the module it could not find may
    be one written later, which no result names yet."""
    return not result.launches and any(d.code == "TL010" for d in result.diagnostics)


def follow_edits(doc: Doc, changes: Any, current: str, encoding: str) -> None:
    """Follow unsaved edits, so hovers land on the lines the analysed ones are now."""
    moved: dict[int, linemap.Tracked] = {}
    for holder in (doc.snapshot, doc.published):
        if holder is None or holder.tracked is None:
            continue
        key = id(holder.tracked)
        if key not in moved:
            try:
                moved[key] = linemap.advance(holder.tracked, changes, encoding)
            except Exception:  # noqa: BLE001 - a change we cannot follow: fall back to a line diff
                log.exception("following a change failed")
                moved[key] = holder.tracked
            moved[key] = linemap.resync(moved[key], current)
        holder.tracked = moved[key]


def disk_text(path: str | os.PathLike) -> str | None:
    """The file as the worker will read it (line breaks as written, as a buffer has them), or None."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def file_path(uri: str) -> Path | None:
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and path.startswith("/") and len(path) > 2 and path[2] == ":":
        path = path[1:]
    return Path(path)


def is_config_file(uri: str) -> bool:
    path = file_path(uri)
    return path is not None and path.name in CONFIG_FILES


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root` (paths.relative_posix), else its bare name."""
    return relative_posix(path, root) or path.name


class Tasks:
    """Background tasks of one owner, referenced until they finish (the event loop keeps only weak ones)."""

    def __init__(self) -> None:
        self._live: set[asyncio.Task] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._live.add(task)
        task.add_done_callback(self._live.discard)
        return task
