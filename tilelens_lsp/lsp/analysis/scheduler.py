"""When documents are analysed: generations, debounce, cancellation and the one run loop.

Each open or save starts a new generation of its document (as rust-analyzer's flycheck restarts on
save); results of an older generation are dropped, and a stale run on the worker is cancelled (the
worker is killed) unless it is young enough to finish first. The scheduler owns the pending
documents and its loop; how one run goes, and which run is in flight, is the runner's (run.py),
given to the constructor as anything with `run`, `in_flight` and `cancel`, as are the clock and the
sleep it waits with, so it can be driven by a fake runner on a fake clock.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Awaitable, Callable, Mapping, Protocol

from lsprotocol import types

from tilelens_lsp.lsp import linemap
from tilelens_lsp.lsp.state import Doc, Run, Snapshot, disk_text, log

if TYPE_CHECKING:
    from tilelens_lsp.lsp.editor import Editor

CANCEL_GRACE = 0.3  # a stale run younger than this finishes (cheaper than a worker restart)
DEBOUNCE = 0.1  # saves closer than this form a burst: its run waits for quiet, then coalesces
LONE_SAVE_DELAY = 0.0  # a lone save runs at once: a save storm's first run is dropped or superseded
MAX_DEBOUNCE = 2.0  # ... but a document saved nonstop still gets a run this often


class Runs(Protocol):
    """What the scheduler needs of the runner (run.py's Runner)."""

    async def run(self, doc: Doc) -> None: ...

    def in_flight(self) -> Run | None: ...

    def cancel(self, run: Run) -> None: ...


class Scheduler:
    """The pending documents and the loop that works through them in order."""

    def __init__(
        self,
        docs: Mapping[str, Doc],
        runner: Runs,
        editor: "Editor",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._docs = docs
        self._runner = runner
        self._editor = editor
        self._clock = clock
        self._sleep = sleep
        self._pending: dict[str, None] = {}
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._stopped = False

    def start(self) -> None:
        self._wake = asyncio.Event()
        if self._pending:
            self._wake.set()  # documents opened before `initialized`
        self._task = asyncio.ensure_future(self._loop())

    def stop(self) -> None:
        self._stopped = True
        if self._task is not None and not self._task.done():
            try:
                self._task.cancel()
            except RuntimeError:
                pass

    def is_pending(self, uri: str) -> bool:
        return uri in self._pending

    # -- generations

    def schedule(self, doc: Doc, why: str = "re-run") -> None:
        """A new generation of `doc`: older results are dropped, its stale run cancelled."""
        now = self._clock()
        doc.generation += 1
        text = "" if doc.too_large else self._editor.text(doc.uri)  # too large: never tracked
        # the worker analyses the file on disk: that is the text its verdicts are about, followed from
        # here onto the buffer (which differs where the editor restored unsaved changes at open, or a
        # helper's save re-runs a file with unsaved edits)
        saved = None if doc.too_large or doc.path is None else disk_text(doc.path)
        tracked = linemap.resync(linemap.start(text if saved is None else saved), text)
        doc.snapshot = Snapshot(doc.generation, tracked, f"version {doc.version}, {why} at {time.strftime('%H:%M:%S')}")
        doc.burst = doc.touched > 0 and now - doc.touched < DEBOUNCE
        doc.touched = now
        if doc.uri not in self._pending:
            doc.pending_since = now
            self._pending[doc.uri] = None
        self.cancel_stale(doc.uri)
        if self._wake is not None:
            self._wake.set()

    def rerun_all(self, why: str) -> None:
        if self._docs:
            self._editor.log(f"re-running {len(self._docs)} open document(s): {why}")
        for doc in list(self._docs.values()):
            self.schedule(doc)

    def forget(self, uri: str) -> None:
        """The document was closed: no run of it is pending, and its run in flight is stale."""
        self._pending.pop(uri, None)
        self.cancel_stale(uri)

    # -- cancellation

    def cancel_stale(self, uri: str) -> None:
        run = self._runner.in_flight()
        if run is None or run.uri != uri or run.cancelled:
            return
        age = self._clock() - run.started
        if age >= CANCEL_GRACE:
            self._runner.cancel(run)
        else:
            # Most runs end within a moment: let it finish rather than restart the worker.
            asyncio.get_running_loop().call_later(CANCEL_GRACE - age, self._cancel_if_still_stale, run)

    def _cancel_if_still_stale(self, run: Run) -> None:
        doc = self._docs.get(run.uri)
        if not run.finished and (doc is None or doc.generation != run.generation):
            self._runner.cancel(run)

    # -- the loop

    async def _loop(self) -> None:
        assert self._wake is not None
        while not self._stopped:
            await self._wake.wait()
            self._wake.clear()
            while self._pending and not self._stopped:
                uri = next(iter(self._pending))
                doc = self._docs.get(uri)
                if doc is None:
                    self._pending.pop(uri, None)
                    continue
                now = self._clock()
                # a lone save runs almost at once; saves in a burst wait for a quiet moment and coalesce
                quiet = DEBOUNCE if doc.burst else LONE_SAVE_DELAY
                wait = min(doc.touched + quiet, doc.pending_since + MAX_DEBOUNCE) - now
                if wait > 0:
                    await self._sleep(wait)
                    continue
                self._pending.pop(uri, None)
                try:
                    await self._runner.run(doc)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad run must not stop the loop
                    log.exception("run failed")
                    self._editor.log(
                        f"internal error while analysing {uri}: {type(exc).__name__}: {exc}", types.MessageType.Error
                    )
