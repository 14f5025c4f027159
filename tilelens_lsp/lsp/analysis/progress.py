"""Progress bars for runs that take a while, and which run a bar's cancel button belongs to.

A run gets a `window/workDoneProgress` token only after PROGRESS_AFTER seconds, so quick saves show
nothing. The bars are sent through the editor (editor.py); cancelling one is the caller's business
(analysis/__init__.py asks `run_for(token)`). Only used for clients that support progress.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING

from tilelens_lsp.lsp.state import Run

if TYPE_CHECKING:
    from tilelens_lsp.lsp.editor import Editor

PROGRESS_AFTER = 0.3  # seconds a run may take before the client gets a progress bar


class Progress:
    """The progress tokens of the runs of one connection."""

    def __init__(self, editor: "Editor") -> None:
        self._editor = editor
        self._runs: dict[str, Run] = {}
        self._ids = itertools.count(1)

    def run_for(self, token: object) -> Run | None:
        """The run whose bar `token` is, if it still has one."""
        return self._runs.get(str(token))

    async def begin(self, run: Run) -> None:
        await asyncio.sleep(PROGRESS_AFTER)
        if run.finished or run.cancelled:
            return
        token = f"tilelens/{next(self._ids)}"
        try:
            await self._editor.create_progress(token)
        except Exception as exc:  # noqa: BLE001 - no progress bar is no failure
            self._editor.log(f"no progress token: {exc}")
            return
        self._runs[token] = run
        if run.finished:
            self._end(token)
            return
        run.token = token
        self._editor.begin_progress(token, "tilelens", f"analysing {run.path.name}")

    async def end(self, run: Run, task: asyncio.Task) -> None:
        if not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        if run.token is not None:
            self._end(run.token, "cancelled" if run.cancelled else "done")

    def _end(self, token: str, message: str | None = None) -> None:
        self._editor.end_progress(token, message)
        self._runs.pop(token, None)
