"""What the editor tells the server: the handshake, documents opened, changed, saved and closed,
settings and launch-toml changes, and the end of the connection.

Functions of (session, editor, analysis, params), called by server.py's handlers: each updates the
session's state (session.py) and tells the analysis (analysis/) what became stale. Nothing here
converts results or answers requests (features/).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tilelens_lsp.lsp import tomlwatch
from tilelens_lsp.lsp.state import Doc, disk_text, file_path, follow_edits, is_config_file, over_limit, stopped_at_import
from tilelens_lsp.settings import merge

if TYPE_CHECKING:
    from tilelens_lsp.lsp.analysis import Analysis
    from tilelens_lsp.lsp.editor import Editor
    from tilelens_lsp.lsp.session import Session

WORKER_SETTINGS = ("interpreter", "target", "memory_limit_mb")  # a change of these restarts the worker


# -- lifecycle


def initialize(session: "Session", editor: "Editor", analysis: "Analysis", params: types.InitializeParams) -> None:
    values = settings_section(params.initialization_options)
    try:
        session.init_settings = merge(session.base_settings, values)
    except (ValueError, TypeError) as exc:
        editor.show(f"tilelens: ignoring initializationOptions: {exc}", types.MessageType.Warning)
    session.settings = session.init_settings
    analysis.restart_worker()  # Triton's import overlaps the rest of the handshake


def initialized(session: "Session", editor: "Editor", analysis: "Analysis") -> None:
    analysis.start()
    if editor.cap("workspace.did_change_watched_files.dynamic_registration", False):
        session.tasks.spawn(editor.register_watchers())
    else:  # Neovim on Linux, among others: look at the tomls' modification times instead
        session.tasks.spawn(poll_tomls(session, editor, analysis))
    session.tasks.spawn(poll_sources(session, editor, analysis))
    for toml in tomlwatch.workspace_tomls(editor.folders(), []):
        session.tasks.spawn(session.publish_toml(toml))


def close(session: "Session", analysis: "Analysis") -> None:
    """Stop the worker and every run; idempotent, callable from any thread."""
    session.closing = True
    analysis.stop()


# -- documents


def did_open(session: "Session", editor: "Editor", analysis: "Analysis", item: types.TextDocumentItem) -> None:
    editor.opened(item)
    doc = Doc(item.uri, file_path(item.uri), item.version, too_large=over_limit(item.text))
    session.docs[item.uri] = doc
    if doc.path is not None:
        session.stamps.took_in([os.path.realpath(doc.path)])
    analysis.schedule(doc, "opened")


def did_change(session: "Session", editor: "Editor", params: types.DidChangeTextDocumentParams) -> None:
    text = editor.changed(params)
    doc = session.docs.get(params.text_document.uri)
    if doc is None:
        return
    doc.version = params.text_document.version
    doc.too_large = text is not None and over_limit(text)
    if doc.too_large:
        doc.snapshot = doc.published = None  # nothing to follow: it is not analysed
        return
    follow_edits(doc, params.content_changes, editor.text(doc.uri), editor.encoding())


def did_save(session: "Session", editor: "Editor", analysis: "Analysis", uri: str) -> None:
    path = file_path(uri)
    if is_config_file(uri) and path is not None:
        config_changed(session, editor, analysis, path, "saved")
        return
    doc = session.docs.get(uri)
    if doc is not None:
        analysis.schedule(doc, "saved")
    if path is not None:
        session.stamps.took_in([os.path.realpath(path)])
        rerun_dependents(session, editor, analysis, path, f"{path.name} saved")


def rerun_dependents(session: "Session", editor: "Editor", analysis: "Analysis", path: Path, why: str) -> None:
    """Re-analyse the other open documents whose last verdict was made from `path` (a helper module
    their import ran), or whose import failed: a verdict about the helper's old text would stand
    until each one is saved."""
    real = os.path.realpath(path)
    stale = [
        doc
        for doc in session.docs.values()
        if doc.published is not None
        and doc.path is not None
        and os.path.realpath(doc.path) != real
        and (real in doc.published.result.sources or (path.suffix == ".py" and stopped_at_import(doc.published.result)))
    ]
    if stale:
        editor.log(f"{why}: re-running {len(stale)} open document(s) that may import it")
    for doc in stale:
        analysis.schedule(doc, why)


def did_close(session: "Session", editor: "Editor", analysis: "Analysis", uri: str) -> None:
    editor.closed(uri)
    doc = session.docs.pop(uri, None)
    analysis.forget(uri)
    if doc is not None:
        session.publish(uri, [], None)


# -- files changed by another program (sourcewatch.py)


async def poll_sources(session: "Session", editor: "Editor", analysis: "Analysis") -> None:
    """Every few seconds: re-run the open documents whose file, or a file their verdict was made from,
    another program changed (a `git checkout`, a formatter run in a terminal). The editor reloads
    such a buffer without a save, and the verdict about the old text would otherwise stand."""
    while not session.closing:
        await asyncio.sleep(tomlwatch.POLL_SECONDS)
        try:
            disk_changed(session, editor, analysis)
        except Exception as exc:  # noqa: BLE001 - one bad poll must not end the following
            editor.log(f"following the open documents' files failed: {type(exc).__name__}: {exc}")


def disk_changed(session: "Session", editor: "Editor", analysis: "Analysis") -> None:
    """One poll of `poll_sources`."""
    own: dict[str, list[Doc]] = {}
    followed: set[str] = set()
    for doc in list(session.docs.values()):
        if doc.path is None or is_config_file(doc.uri) or doc.too_large:
            continue
        own.setdefault(os.path.realpath(doc.path), []).append(doc)
        if doc.published is not None:
            followed.update(doc.published.result.sources)
    for changed in session.stamps.changed(sorted(followed | set(own))):
        for doc in own.get(changed, []):
            if doc.snapshot is None or disk_text(changed) != doc.snapshot.tracked.base:
                analysis.schedule(doc, "changed on disk")
        rerun_dependents(session, editor, analysis, Path(changed), f"{Path(changed).name} changed on disk")


# -- the launch tomls (tomlwatch.py)


def config_changed(session: "Session", editor: "Editor", analysis: "Analysis", toml: Path, why: str) -> None:
    """Publish the toml's own problems on it, and re-analyse the open documents it can affect."""
    session.tasks.spawn(session.publish_toml(toml))
    named = tomlwatch.named_files(toml, session.settings.interpreter)
    affected = [
        doc
        for doc in session.docs.values()
        if doc.path is not None and not is_config_file(doc.uri) and tomlwatch.affects(toml, doc.path, named)
    ]
    if affected:
        editor.log(f"{toml.name} {why}: re-running {len(affected)} open document(s)")
    for doc in affected:
        analysis.schedule(doc, f"{toml.name} {why}")


async def poll_tomls(session: "Session", editor: "Editor", analysis: "Analysis") -> None:
    """For clients that cannot watch files: compare the tomls' modification times every few seconds."""
    seen: dict[Path, float | None] | None = None
    while not session.closing:
        tomls = tomlwatch.workspace_tomls(editor.folders(), [d.path for d in session.docs.values() if d.path is not None])
        now = tomlwatch.mtimes(tomls)
        if seen is not None:
            for toml, stamp in now.items():
                if toml in seen and seen[toml] != stamp:
                    config_changed(session, editor, analysis, toml, "changed")
        seen = now
        await asyncio.sleep(tomlwatch.POLL_SECONDS)


def watched_files_changed(
    session: "Session", editor: "Editor", analysis: "Analysis", params: types.DidChangeWatchedFilesParams
) -> None:
    for change in params.changes or []:
        path = file_path(change.uri)
        if is_config_file(change.uri) and path is not None:
            config_changed(session, editor, analysis, path, "changed")


# -- settings


async def change_configuration(session: "Session", editor: "Editor", analysis: "Analysis", settings: Any) -> None:
    values = settings_section(settings)
    if values is None and editor.cap("workspace.configuration", False):
        try:
            pulled = await editor.configuration("tilelens")
            values = pulled if isinstance(pulled, dict) else None
        except Exception as exc:  # noqa: BLE001
            editor.log(f"workspace/configuration failed: {exc}")
    try:
        new = merge(session.init_settings, values or {})
    except (ValueError, TypeError) as exc:
        editor.show(f"tilelens: ignoring a settings change: {exc}", types.MessageType.Warning)
        return
    old, session.settings = session.settings, new
    if new == old:
        return
    changed = [f for f in WORKER_SETTINGS if getattr(old, f) != getattr(new, f)]
    if changed:
        editor.log(f"settings changed ({', '.join(changed)}): restarting the worker")
        analysis.restart_worker()
    analysis.rerun_all("settings changed")


def settings_section(value: Any) -> dict[str, Any] | None:
    """`{"tilelens": {...}}` or the settings at top level; None when nothing usable was sent."""
    if value is None:
        return None
    if hasattr(value, "__dict__") and not isinstance(value, dict):
        value = vars(value)
    if not isinstance(value, dict):
        return None
    inner = value.get("tilelens")
    if isinstance(inner, dict):
        return inner
    return value or None
