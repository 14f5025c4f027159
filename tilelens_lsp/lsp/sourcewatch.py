"""The Python files the open documents' verdicts were made from, followed for changes no save announced.

An editor announces its own saves; nothing announces a file rewritten by another program (`git
checkout`, `git pull`, a formatter run from a terminal, a code generator): the editor reloads the
buffer with a `didChange`, and a verdict about the old text would stand until the next save. So the
server keeps, per file, the (mtime, size) it last took in (at an open, at a save, when a result made
from it arrived) and compares them every few seconds; `sync.py` decides what a changed file re-runs.
Nothing here talks to the client or the worker.
"""

from __future__ import annotations

import os
from typing import Iterable

Stamp = tuple[int, int] | None  # (st_mtime_ns, st_size); None: no such file
_MOVED: Stamp = (-1, -1)  # what no file's stamp is: compared with its real one, a change


def stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


COARSE_CLOCK_NS = 2_000_000_000  # the coarsest file clock in use (FAT: 2 s; HFS+ and some network mounts: 1 s)


def _after(mtime_ns: int, start_ns: int) -> bool:
    """Whether a file with this mtime may have been written after `start_ns`. A file system with a
    coarse clock (whole seconds, or exFAT's 10 ms) truncates the time of the write: one written just
    after the start can show the tick before it, so the whole tick counts (at worst one run more).
    The tick is read off the mtime itself: the largest power of ten it is a multiple of."""
    tick = 1
    while tick < 1_000_000_000 and mtime_ns % (tick * 10) == 0:
        tick *= 10
    if tick == 1_000_000_000:
        tick = COARSE_CLOCK_NS
    return mtime_ns + tick > start_ns


class SourceStamps:
    """Each followed file's stamp as of the last time the server took its contents in."""

    def __init__(self) -> None:
        self._stamps: dict[str, Stamp] = {}

    def took_in(self, paths: Iterable[str], read_before_ns: int | None = None) -> None:
        """These files (resolved paths) were just read for a verdict, or announced by a save. With
        `read_before_ns` (wall clock), the verdict was made from what they held before then: a file
        modified since counts as changed at the next `changed` (a helper saved while the run that
        imported it was still going; its save re-ran no one, since no result named it yet)."""
        for path in paths:
            now = stamp(path)
            self._stamps[path] = (
                _MOVED if read_before_ns is not None and now is not None and _after(now[0], read_before_ns) else now
            )

    def changed(self, paths: Iterable[str]) -> list[str]:
        """Of `paths` (resolved), the files whose stamp moved since it was last taken in. From now on
        only `paths` are followed: a file no open document is made from any more is dropped."""
        out: list[str] = []
        kept: dict[str, Stamp] = {}
        for path in paths:
            now = stamp(path)
            if path in self._stamps and self._stamps[path] != now:
                out.append(path)
            kept[path] = now
        self._stamps = kept
        return out
