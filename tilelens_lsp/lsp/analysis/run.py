"""One run of one document: skip what needs no worker, analyse in the worker's lane, deliver if still current.

The Runner is the one owner of the run in flight (and of the lock that guards it): it is set and
cleared in the worker's lane here, and everyone else asks (`in_flight`) or asks for a cancellation
(`cancel`). A result is delivered only when its generation is still the document's (else it is
dropped), through the `Sink` given to the constructor (the session, which converts and publishes).
The order of runs is scheduler.py's; the worker's life and calls are workerhost.py's.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Protocol

from lsprotocol import types

from tilelens_lsp.lsp import convert, tomlwatch
from tilelens_lsp.lsp.state import Doc, Run, Tasks, is_config_file, relative
from tilelens_lsp.model import FileResult
from tilelens_lsp.settings import MAX_FILE_BYTES, Settings

if TYPE_CHECKING:
    from tilelens_lsp.lsp.analysis.progress import Progress
    from tilelens_lsp.lsp.analysis.workerhost import WorkerHost
    from tilelens_lsp.lsp.editor import Editor


class Sink(Protocol):
    """Where a run's outcome goes (the session): the runner decides, the sink converts and publishes."""

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None: ...

    def accept(
        self,
        doc: Doc,
        generation: int,
        version: int | None,
        result: FileResult,
        text: str,
        rel: str,
        root: Path,
        started_ns: int = 0,
    ) -> None: ...

    def preview(self, doc: Doc, version: int | None, partial: FileResult, text: str, rel: str, root: Path) -> None: ...

    async def publish_toml(self, toml: Path, version: int | None = None) -> None: ...

    def root_for(self, path: Path) -> Path | None: ...


PREVIEW_AFTER = 1.0  # seconds a first run goes before the launches answered so far are shown


def _at_start(message: str, severity: types.DiagnosticSeverity, code: str | None = None) -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        message=message,
        severity=severity,
        source=convert.SOURCE,
        code=code,
    )


class Runner:
    """Runs documents through the worker one at a time and delivers what they find."""

    def __init__(
        self,
        docs: Mapping[str, Doc],
        host: "WorkerHost",
        sink: Sink,
        editor: "Editor",
        settings: Callable[[], Settings],
        progress: "Progress",
    ) -> None:
        self._docs = docs
        self._host = host
        self._sink = sink
        self._editor = editor
        self._settings = settings
        self._progress = progress
        self._tasks = Tasks()
        self._lock = threading.Lock()
        self._in_flight: Run | None = None
        self.counters = {"runs": 0, "cancelled": 0, "dropped": 0}

    # -- the run in flight

    def in_flight(self) -> Run | None:
        with self._lock:
            return self._in_flight

    def cancel(self, run: Run) -> None:
        """Drop `run`'s result; if the worker is busy with it, kill the worker (it restarts)."""
        run.cancelled = True
        with self._lock:
            if self._in_flight is run and self._host.cancel_current():
                self.counters["cancelled"] += 1

    def drop_in_flight(self) -> None:
        """The worker is being replaced: whatever it is running now is not to be published."""
        with self._lock:
            if self._in_flight is not None:
                self._in_flight.cancelled = True

    # -- one run

    async def run(self, doc: Doc) -> None:
        snapshot = doc.snapshot
        # the text as it was saved (what the worker reads from disk), not what was typed since
        text = snapshot.tracked.base if snapshot is not None else self._editor.text(doc.uri)
        if doc.path is not None and is_config_file(doc.uri):
            await self._sink.publish_toml(doc.path, doc.version)  # a launch toml: its own problems, on it
            return
        if doc.path is None or not doc.path.name.endswith(".py") or not doc.path.is_file():
            self._sink.publish(doc.uri, [], doc.version)
            return
        size = doc.path.stat().st_size
        if doc.too_large or size > MAX_FILE_BYTES:  # as `check`: a TL010, nothing imported or indexed
            mib = max(size, len(self._editor.text(doc.uri).encode("utf-8"))) / 2**20
            doc.published = None
            self._sink.publish(
                doc.uri,
                [
                    _at_start(
                        f"cannot read this file: it is {mib:.1f} MiB, above the {MAX_FILE_BYTES // 2**20} MiB "
                        "limit; not analysed",
                        types.DiagnosticSeverity.Error,
                        "TL010",
                    )
                ],
                doc.version,
            )
            return
        root = self._sink.root_for(doc.path)
        if root is None:
            diags = []
            if "tilelens:" in text:
                diags = [
                    _at_start(
                        "tilelens does not analyse files outside the workspace folders (importing a "
                        "file runs its code); set allowOutsideWorkspace to analyse it",
                        types.DiagnosticSeverity.Information,
                    )
                ]
            self._sink.publish(doc.uri, diags, doc.version)
            return
        rel = relative(doc.path, root)
        if "triton" not in text and "tilelens" not in text and not tomlwatch.may_declare(doc.path, root):
            # Not a kernel file, and no toml table launches it: nothing to import, keep the worker free.
            self._sink.accept(doc, doc.generation, doc.version, FileResult(rel), text, rel, root)
            return
        run = Run(doc.uri, doc.generation, doc.version, text, doc.path, root, rel, self._settings())
        gate = self._host.gate
        if gate is not None:
            self._sink.accept(doc, run.generation, run.version, FileResult(rel, (), (gate,)), text, rel, root)
            return
        progress = self._tasks.spawn(self._progress.begin(run)) if self._editor.progress_support else None
        t0 = time.monotonic()
        preview = self._previewer(doc, run, text, rel, root) if doc.published is None else None
        result = await self._host.lane.submit(self._analyze, run, preview)
        elapsed = time.monotonic() - t0
        run.finished = True
        current = self._docs.get(doc.uri)
        stale = run.cancelled or current is not doc or doc.generation != run.generation
        if result is not None and not stale:
            # the diagnostics go out first: the log line and the progress bar's end can follow them
            self._sink.accept(doc, run.generation, run.version, result, text, rel, root, run.started_ns)
        if progress is not None:
            await self._progress.end(run, progress)
        if result is None or stale:
            self.counters["dropped"] += 1
            self._editor.log(f"dropped a stale run of {doc.path.name} ({elapsed:.2f} s)")
            return
        self._editor.log(f"analysed {doc.path.name} in {elapsed:.2f} s: {convert.summary(result)}")

    def _previewer(self, doc: Doc, run: Run, text: str, rel: str, root: Path) -> Callable[[FileResult], None]:
        """On a document's first run (nothing of it is published yet, so nothing can flicker) that takes
        longer than PREVIEW_AFTER, the verdicts of each launch are shown as it is answered while others
        remain: a module of many slow launches shows its first diagnostics after its first launch, not
        its last. The progress bar runs until the whole result replaces them; a quick file and every
        later run publish once, whole."""
        loop = asyncio.get_running_loop()

        def show(partial: FileResult) -> None:  # in the lane: hand it to the event loop
            if time.monotonic() - run.started < PREVIEW_AFTER:
                return  # a quick file publishes once, whole
            if partial.diagnostics or any(launch.diagnostics for launch in partial.launches):
                loop.call_soon_threadsafe(self._preview, doc, run, partial, text, rel, root)

        return show

    def _preview(self, doc: Doc, run: Run, partial: FileResult, text: str, rel: str, root: Path) -> None:
        current = self._docs.get(doc.uri)
        if run.cancelled or run.finished or current is not doc or doc.generation != run.generation:
            return
        if doc.published is None:
            self._sink.preview(doc, run.version, partial, text, rel, root)

    def _analyze(self, run: Run, on_partial: Callable[[FileResult], None] | None = None) -> FileResult | None:  # in the lane
        host = self._host
        worker = host.worker
        if worker is None or host.closed:
            return None
        with self._lock:
            doc = self._docs.get(run.uri)  # read across threads: one dict lookup, one int
            if run.cancelled or doc is None or doc.generation != run.generation:
                return None  # stale before it started: a newer run is pending
            self.counters["runs"] += 1  # only this thread writes it
            run.started = time.monotonic()
            run.started_ns = time.time_ns()
            self._in_flight = run
        try:
            result = host.analyze(worker, run, on_partial)
        finally:
            with self._lock:
                self._in_flight = None
        host.after_analysis(worker)
        return result
