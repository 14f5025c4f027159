"""Progress bars for runs that take a while, and the client's cancel button on them.

A run gets a `window/workDoneProgress` token only after PROGRESS_AFTER seconds, so quick saves show
nothing; cancelling the bar cancels the run (scheduling.py). Only for clients that support it.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING

from lsprotocol import types

from tilelens_lsp.lsp.state import Run

if TYPE_CHECKING:
    from tilelens_lsp.lsp.session import Session

PROGRESS_AFTER = 0.3   # seconds a run may take before the client gets a progress bar


class Progress:
    """The progress tokens of this session's runs."""

    def __init__(self, session: "Session") -> None:
        self.session = session
        self.tokens: dict[str, Run] = {}
        self.token_ids = itertools.count(1)

    async def begin(self, run: Run) -> None:
        await asyncio.sleep(PROGRESS_AFTER)
        if run.finished or run.cancelled:
            return
        progress = self.session.server.work_done_progress
        token = f"tilelens/{next(self.token_ids)}"
        try:
            await asyncio.wait_for(progress.create_async(token), 10)
        except Exception as exc:  # noqa: BLE001 - no progress bar is no failure
            self.session.editor.log(f"no progress token: {exc}")
            return
        self.tokens[token] = run
        if run.finished:
            progress.end(token, types.WorkDoneProgressEnd())
            self._forget(token)
            return
        run.token = token
        progress.begin(token, types.WorkDoneProgressBegin(
            title="tilelens", message=f"analysing {run.path.name}", cancellable=True))

    async def end(self, run: Run, task: asyncio.Task) -> None:
        if not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        token = run.token
        if token is not None:
            message = "cancelled" if run.cancelled else "done"
            self.session.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            self._forget(token)

    def _forget(self, token: str) -> None:
        self.session.server.work_done_progress.tokens.pop(token, None)
        self.tokens.pop(token, None)
