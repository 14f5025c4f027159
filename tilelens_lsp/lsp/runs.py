"""One run of one document: skip what needs no worker, analyse in the worker's lane, publish if still current.

A result is published only when its generation is still the document's (else it is dropped), after
the file's suppression comments are applied and the records are converted (convert.py). The order
of runs is scheduling.py's; the worker's life is workerhost.py's.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from lsprotocol import types

from tilelens_lsp import suppress
from tilelens_lsp.lsp import convert, linemap
from tilelens_lsp.lsp.state import Doc, Published, Run, is_config_file, log, relative
from tilelens_lsp.model import FileResult
from tilelens_lsp.settings import MAX_FILE_BYTES
from tilelens_lsp.worker.process import WorkerUnavailable

if TYPE_CHECKING:
    from pathlib import Path

    from tilelens_lsp.lsp.session import Session


class Runs:
    """Runs documents through the worker and publishes what they find."""

    def __init__(self, session: "Session") -> None:
        self.session = session

    async def run(self, doc: Doc) -> None:
        s = self.session
        snapshot = doc.snapshot
        # the text as it was saved (what the worker reads from disk), not what was typed since
        text = snapshot.tracked.base if snapshot is not None else s.editor.text(doc.uri)
        if doc.path is not None and is_config_file(doc.uri):
            await s.publish_toml(doc.path, doc.version)    # a launch toml: its own problems, on it
            return
        if doc.path is None or not doc.path.name.endswith(".py") or not doc.path.is_file():
            s.publish(doc.uri, [], doc.version)
            return
        size = doc.path.stat().st_size
        if doc.too_large or size > MAX_FILE_BYTES:   # as `check`: a TL010, nothing imported or indexed
            mib = max(size, len(s.editor.text(doc.uri).encode("utf-8"))) / 2**20
            doc.published = None
            s.publish(doc.uri, [types.Diagnostic(
                range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                message=f"cannot read this file: it is {mib:.1f} MiB, above the {MAX_FILE_BYTES // 2**20} MiB "
                        "limit; not analysed", severity=types.DiagnosticSeverity.Error, source=convert.SOURCE,
                code="TL010")], doc.version)
            return
        root = s.root_for(doc.path)
        if root is None:
            diags = []
            if "tilelens:" in text:
                diags = [types.Diagnostic(
                    range=types.Range(start=types.Position(line=0, character=0),
                                      end=types.Position(line=0, character=0)),
                    message="tilelens does not analyse files outside the workspace folders (importing a "
                            "file runs its code); set allowOutsideWorkspace to analyse it",
                    severity=types.DiagnosticSeverity.Information, source=convert.SOURCE)]
            s.publish(doc.uri, diags, doc.version)
            return
        rel = relative(doc.path, root)
        if "triton" not in text and "tilelens" not in text:
            # Not a kernel file: nothing to import, keep the worker free.
            self.accept(doc, doc.generation, doc.version, FileResult(rel), text, rel, root)
            return
        run = Run(doc.uri, doc.generation, doc.version, text, doc.path, root, rel, s.settings)
        if s.workers.gate is not None:
            self.accept(doc, run.generation, run.version, FileResult(rel, (), (s.workers.gate,)), text, rel, root)
            return
        progress = s.spawn(s.progress.begin(run)) if s.editor.progress_support else None
        t0 = time.monotonic()
        result = await s.workers.lane.submit(self._analyze, run)
        elapsed = time.monotonic() - t0
        run.finished = True
        if progress is not None:
            await s.progress.end(run, progress)
        current = s.docs.get(doc.uri)
        if result is None or run.cancelled or current is not doc or doc.generation != run.generation:
            s.counters["dropped"] += 1
            s.editor.log(f"dropped a stale run of {doc.path.name} ({elapsed:.2f} s)")
            return
        s.editor.log(f"analysed {doc.path.name} in {elapsed:.2f} s: {convert.summary(result)}")
        self.accept(doc, run.generation, run.version, result, text, rel, root)

    def _analyze(self, run: Run) -> FileResult | None:  # in the lane
        s = self.session
        scheduler = s.scheduler
        worker = s.workers.worker
        if worker is None or s.closing:
            return None
        with scheduler.flight_lock:
            doc = s.docs.get(run.uri)      # read across threads: one dict lookup, one int
            if run.cancelled or doc is None or doc.generation != run.generation:
                return None                # stale before it started: a newer run is pending
            s.counters["runs"] += 1        # only this thread writes it
            run.started = time.monotonic()
            scheduler.in_flight = run
        try:
            if worker.proc is not None:
                # A worker that died while idle (killed, OOM) answers the ping with a crash and is
                # replaced quietly by the analysis below: this file is not to blame.
                try:
                    worker.request("ping", {}, 5.0)
                except (TimeoutError, WorkerUnavailable):
                    pass
                if run.cancelled:
                    return None
            gate = s.workers.check_gate(worker)
            if gate is not None:
                return FileResult(run.rel, (), (gate,))
            result = worker.analyze(run.path, run.root, settings=run.settings)
        finally:
            with scheduler.flight_lock:
                scheduler.in_flight = None
        s.workers.after_analysis(worker)
        return result

    def accept(self, doc: Doc, generation: int, version: int | None, result: FileResult, text: str,
               rel: str, root: "Path") -> None:
        s = self.session
        if result.path and not os.path.isabs(result.path):
            rel = result.path       # the worker's name for it: an installed module's importable path
        result = suppress.apply(result, text, rel)
        ctx = convert.DocumentContext(doc.uri, rel, text, root, s.editor.related_support, s.editor.units)
        try:
            diagnostics = convert.to_lsp_diagnostics(result, ctx)
        except Exception as exc:  # noqa: BLE001 - a formatting bug must not lose the document
            log.exception("converting diagnostics failed")
            diagnostics = [types.Diagnostic(
                range=types.Range(start=types.Position(line=0, character=0),
                                  end=types.Position(line=0, character=0)),
                message=f"tilelens could not format its results: {type(exc).__name__}: {exc}",
                severity=types.DiagnosticSeverity.Warning, source=convert.SOURCE, code="TL050")]
        snapshot = doc.snapshot
        if snapshot is not None and snapshot.generation == generation and snapshot.tracked.base == text:
            tracked, label = snapshot.tracked, snapshot.label
        else:
            tracked, label = linemap.resync(linemap.start(text), s.editor.text(doc.uri)), "the last save"
        doc.published = Published(generation, result, text, rel, tracked, label)
        s.publish(doc.uri, diagnostics, version)
