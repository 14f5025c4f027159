"""When documents are analysed: generations, debounce, cancellation and the one run loop.

Each open or save starts a new generation of its document (rust-analyzer's flycheck); results of an
older generation are dropped, and a stale run on the worker is cancelled (the worker is killed) unless
it is young enough to finish first. How one run goes is runs.py; the worker's life is workerhost.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tilelens_lsp.lsp import linemap
from tilelens_lsp.lsp.state import Doc, Run, Snapshot, log

if TYPE_CHECKING:
    from tilelens_lsp.lsp.session import Session

CANCEL_GRACE = 0.3     # a stale run younger than this finishes (cheaper than a worker restart)
DEBOUNCE = 0.1         # saves closer than this form a burst: its run waits for quiet, then coalesces
LONE_SAVE_DELAY = 0.0   # a lone save runs at once: a save storm's first run is dropped or superseded
MAX_DEBOUNCE = 2.0     # ... but a document saved nonstop still gets a run this often


class Scheduler:
    """The pending documents, the run in flight and the loop that works through them in order."""

    def __init__(self, session: "Session") -> None:
        self.session = session
        self.pending: dict[str, None] = {}
        self.flight_lock = threading.Lock()
        self.in_flight: Run | None = None
        self.wake: asyncio.Event | None = None
        self.runner: asyncio.Task | None = None

    def start(self) -> None:
        self.wake = asyncio.Event()
        if self.pending:
            self.wake.set()   # documents opened before `initialized`
        self.runner = self.session.spawn(self._run_loop())

    def stop(self) -> None:
        if self.runner is not None and not self.runner.done():
            try:
                self.runner.cancel()
            except RuntimeError:
                pass

    # -- generations

    def schedule(self, doc: Doc, why: str = "re-run") -> None:
        """A new generation of `doc`: older results are dropped, its stale run cancelled."""
        now = time.monotonic()
        doc.generation += 1
        text = "" if doc.too_large else self.session.editor.text(doc.uri)   # too large: never tracked
        doc.snapshot = Snapshot(doc.generation, linemap.start(text),
                                f"version {doc.version}, {why} at {time.strftime('%H:%M:%S')}")
        doc.burst = doc.touched > 0 and now - doc.touched < DEBOUNCE
        doc.touched = now
        if doc.uri not in self.pending:
            doc.pending_since = now
            self.pending[doc.uri] = None
        self.cancel_stale(doc.uri)
        if self.wake is not None:
            self.wake.set()

    def rerun_all(self, why: str) -> None:
        docs = self.session.docs
        if docs:
            self.session.editor.log(f"re-running {len(docs)} open document(s): {why}")
        for doc in docs.values():
            self.schedule(doc)

    # -- cancellation

    def cancel_stale(self, uri: str) -> None:
        with self.flight_lock:
            run = self.in_flight
        if run is None or run.uri != uri or run.cancelled:
            return
        age = time.monotonic() - run.started
        if age >= CANCEL_GRACE:
            self.cancel_run(run)
        else:
            # Most runs end within a moment: let it finish rather than restart the worker.
            asyncio.get_running_loop().call_later(CANCEL_GRACE - age, self._cancel_if_still_stale, run)

    def _cancel_if_still_stale(self, run: Run) -> None:
        doc = self.session.docs.get(run.uri)
        if not run.finished and (doc is None or doc.generation != run.generation):
            self.cancel_run(run)

    def cancel_run(self, run: Run) -> None:
        """Drop `run`'s result; if the worker is busy with it, kill the worker (it restarts)."""
        run.cancelled = True
        workers = self.session.workers
        with self.flight_lock:
            if self.in_flight is run and workers.worker is not None:
                self.session.counters["cancelled"] += 1
                workers.worker.cancel()

    def cancel_token(self, token: Any) -> None:
        run = self.session.progress.tokens.get(str(token))
        if run is not None and not run.finished:
            self.session.editor.log(f"cancelled by the client: {Path(run.path).name}")
            self.cancel_run(run)

    # -- the loop

    async def _run_loop(self) -> None:
        assert self.wake is not None
        s = self.session
        while not s.closing:
            await self.wake.wait()
            self.wake.clear()
            while self.pending and not s.closing:
                uri = next(iter(self.pending))
                doc = s.docs.get(uri)
                if doc is None:
                    self.pending.pop(uri, None)
                    continue
                now = time.monotonic()
                # a lone save runs almost at once; saves in a burst wait for a quiet moment and coalesce
                quiet = DEBOUNCE if doc.burst else LONE_SAVE_DELAY
                wait = min(doc.touched + quiet, doc.pending_since + MAX_DEBOUNCE) - now
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                self.pending.pop(uri, None)
                try:
                    await s.runs.run(doc)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad run must not stop the loop
                    log.exception("run failed")
                    s.editor.log(f"internal error while analysing {uri}: {type(exc).__name__}: {exc}",
                                 types.MessageType.Error)
