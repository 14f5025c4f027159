"""One client connection's state: its settings, its open documents and what was published on them.

The Session is plain state plus the one place that publishes: a run's result (suppressions applied,
converted by convert.py, remembered as the document's `Published` for hovers and lenses), a toml's
own problems, or a plain list of diagnostics, all sent through the editor (editor.py). It also says
which workspace folder a file belongs to. It decides nothing about when to analyse (analysis/) nor
answers requests (features/); the notifications that change it are sync.py's.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from tilelens_lsp import suppress
from tilelens_lsp.lsp import convert, linemap, tomlwatch
from tilelens_lsp.lsp.sourcewatch import SourceStamps
from tilelens_lsp.lsp.state import Doc, Published, Tasks, log, stopped_at_import
from tilelens_lsp.model import FileResult
from tilelens_lsp.paths import find_root
from tilelens_lsp.settings import Settings, from_environment

if TYPE_CHECKING:
    from tilelens_lsp.lsp.editor import Editor


class Session:
    """Settings, documents and published results of one client connection."""

    def __init__(self, editor: "Editor") -> None:
        self.editor = editor
        self.base_settings = from_environment(Settings())
        self.settings = self.base_settings
        self.init_settings = self.base_settings
        self.docs: dict[str, Doc] = {}
        self.closing = False
        self.shutdown_requested = False
        self.counters = {"published": 0}
        self.tasks = Tasks()
        self.stamps = SourceStamps()  # the files the published verdicts were made from, as taken in

    # -- publishing

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.counters["published"] += 1
        self.editor.publish(uri, diagnostics, version)

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
    ) -> None:
        """Publish a run's result on `doc` and remember it for hovers, lenses and later edits; a
        source written after the run began (`started_ns`, wall clock) re-runs it at the next poll."""
        rel, result = self._as_shown(result, text, rel)
        tracked, label = self._tracked(doc, generation, text)
        try:
            diagnostics = self._to_lsp(doc, result, text, rel, root, tracked)
        except Exception as exc:  # noqa: BLE001 - a formatting bug must not lose the document
            log.exception("converting diagnostics failed")
            diagnostics = [
                types.Diagnostic(
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                    message=f"tilelens could not format its results: {type(exc).__name__}: {exc}",
                    severity=types.DiagnosticSeverity.Warning,
                    source=convert.SOURCE,
                    code="TL050",
                )
            ]
        self.publish(doc.uri, diagnostics, version)  # first: what follows is for later hovers and edits
        if stopped_at_import(result) and doc.published is not None:
            # a helper deleted (a branch switched) fails the import and leaves the sources: they are
            # still followed, so that putting it back re-runs this file
            result = replace(result, sources=tuple(sorted({*result.sources, *doc.published.result.sources})))
        self.stamps.took_in(result.sources, read_before_ns=started_ns or None)
        doc.published = Published(generation, result, text, rel, tracked, label)

    def _tracked(self, doc: Doc, generation: int, text: str) -> tuple[linemap.Tracked, str]:
        """The analysed `text` followed onto the document as it is now, and which version it was."""
        snapshot = doc.snapshot
        if snapshot is not None and snapshot.generation == generation and snapshot.tracked.base == text:
            return snapshot.tracked, snapshot.label
        return linemap.resync(linemap.start(text), self.editor.text(doc.uri)), "the last save"

    def preview(self, doc: Doc, version: int | None, partial: FileResult, text: str, rel: str, root: Path) -> None:
        """Publish the verdicts of the launches answered so far (a first run still going), remembering
        nothing: hovers, lenses and quick fixes wait for the whole result. Nothing is published while
        they show nothing, so an empty list never reads as a clean file before the run is done."""
        rel, partial = self._as_shown(partial, text, rel)
        try:
            diagnostics = self._to_lsp(doc, partial, text, rel, root, self._tracked(doc, doc.generation, text)[0])
        except Exception:  # noqa: BLE001 - the whole result comes next and reports its own failure
            log.exception("converting a partial result failed")
            return
        if diagnostics:
            self.publish(doc.uri, diagnostics, version)

    @staticmethod
    def _as_shown(result: FileResult, text: str, rel: str) -> tuple[str, FileResult]:
        """The file's name as the result gives it (an installed module's importable path) and the result
        with the file's suppressions applied."""
        if result.path and not os.path.isabs(result.path):
            rel = result.path
        return rel, suppress.apply(result, text, rel)

    def _to_lsp(
        self, doc: Doc, result: FileResult, text: str, rel: str, root: Path, tracked: linemap.Tracked
    ) -> list[types.Diagnostic]:
        """The result's diagnostics, made on the analysed `text`, on the lines the document has now."""
        ctx = convert.DocumentContext(doc.uri, rel, text, root, self.editor.related_support, self.editor.units)
        return convert.onto_buffer(convert.to_lsp_diagnostics(result, ctx), doc.uri, tracked, self.editor.units)

    async def publish_toml(self, toml: Path, version: int | None = None) -> None:
        """A launch toml's own problems (tomlwatch.py), on the toml."""
        uri = toml.as_uri()
        found = await asyncio.to_thread(tomlwatch.problems, toml, self.settings.interpreter)
        try:
            text = toml.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        doc = self.docs.get(uri)
        self.publish(
            uri, tomlwatch.to_lsp(found, text), version if version is not None else doc.version if doc is not None else None
        )

    # -- where a file belongs

    def root_for(self, path: Path) -> Path | None:
        """The workspace folder holding `path` (the innermost), or the project inside it that has its
        own `tilelens.toml` (the nearest above the file); else None unless allowed outside."""
        real = Path(os.path.realpath(path))
        best: Path | None = None
        for folder in self.editor.folders():
            base = Path(os.path.realpath(folder))
            if real == base or base in real.parents:
                if best is None or len(base.parts) > len(best.parts):
                    best = base
        if best is not None:
            return _project_in(real, best)
        # lazy: the toml reader loads directives (~80 ms at start); only files outside the folders need it
        from tilelens_lsp.launches.toml import declared_by_folder

        for folder in self.editor.folders():  # an installed module that a workspace toml names (`module =`)
            if declared_by_folder(folder, real, self.settings.interpreter):
                return folder
        if self.settings.allow_outside_workspace:
            return find_root(real.parent)
        return None


def _project_in(path: Path, folder: Path) -> Path:
    """The nearest folder between `path` and the workspace `folder` that holds a `tilelens.toml`, else
    `folder`. A monorepo opened at its top keeps one `tilelens.toml` per project: `check` on a file
    takes the project's folder as its root and reads that toml, and so must the editor, or it calls
    the file's kernels "not checked" where `check` reports their launches' verdicts."""
    for parent in path.parents:
        if parent == folder or folder not in parent.parents:
            break
        if (parent / "tilelens.toml").is_file():
            return parent
    return folder
