"""The requests an editor makes of stored results: hover, directive help, code actions, lenses, stats.

They read what the last run published (never the worker), so they answer while an analysis runs or
hangs. The content comes from hover.py, directive_help.py, codeactions.py and codelens.py; this
module only finds the document and the position, and converts (convert.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tilelens_lsp.lsp import codeactions, codelens, convert, directive_help, hover, linemap
from tilelens_lsp.model import Suggestion

if TYPE_CHECKING:
    from tilelens_lsp.lsp.session import Session


class Features:
    """Answers to the editor's questions about one document, from the session's stored state."""

    def __init__(self, session: "Session") -> None:
        self.session = session
        self.editor = session.editor

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        doc = self.session.docs.get(params.text_document.uri)
        if doc is None or doc.published is None:
            return None
        pub = doc.published
        line_map = (pub.tracked.map if pub.tracked is not None
                    else linemap.diff_map(pub.text, self.editor.text(doc.uri)))
        markdown = hover.hover_after_edits(pub.result, pub.rel, pub.text, line_map, params.position.line + 1,
                                           pub.label)
        if markdown is None:
            return None
        kinds = self.editor.cap("text_document.hover.content_format", None) or [types.MarkupKind.Markdown]
        if types.MarkupKind.Markdown in kinds:
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.PlainText,
                                                        value=hover.plaintext(markdown)))

    # -- inside directives: completion, signature help, go to definition (directive_help.py)

    def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        text, line, col = self._cursor(params)
        items = directive_help.complete(text, line, col) if "tilelens:" in text else None
        return convert.to_completion_list(items) if items is not None else None

    def signature_help(self, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        text, line, col = self._cursor(params)
        found = directive_help.signature_help(text, line, col) if "tilelens:" in text else None
        return convert.to_signature_help(found, self.editor.units) if found is not None else None

    def definition(self, params: types.DefinitionParams) -> types.Location | None:
        text, line, col = self._cursor(params)
        target = directive_help.definition(text, line, col) if "tilelens:" in text else None
        if target is None:
            return None
        return types.Location(uri=params.text_document.uri,
                              range=convert.target_range(text, target, self.editor.units))

    def _cursor(self, params: Any) -> tuple[str, int, int]:
        """The document's text and the request's position, its column in characters."""
        text = self.editor.text(params.text_document.uri)
        lines = linemap.split_lines(text)
        position = params.position
        if not 0 <= position.line < len(lines):
            return text, position.line, position.character
        column = convert.column_from_units(lines[position.line], position.character, self.editor.units)
        return text, position.line, column

    # -- code actions, code lens and its commands (codeactions.py, codelens.py)

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        resolvable = "edit" in (self.editor.cap("text_document.code_action.resolve_support.properties", None) or [])
        return codeactions.code_actions(uri, self.editor.text(uri), list(params.context.diagnostics or []),
                                        self.editor.units, params.context.only, resolvable) or None

    # -- TL100's fix: an example launch the worker found and compiled (suggest.py)

    async def resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        request = codeactions.declare_launch_request(action)
        if request is None:
            return action
        edit = await self._declare_launch(*request)
        if edit is not None:
            action.edit = edit
        return action

    async def declare_launch(self, uri: Any = None, kernel: Any = None) -> dict[str, Any]:
        """The command form (clients that cannot resolve an action's edit): find it and apply it."""
        edit = await self._declare_launch(str(uri), str(kernel))
        if edit is None:
            return {"applied": False}
        reply = await self.session.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=f"Declare an example launch of {kernel}"))
        return {"applied": bool(getattr(reply, "applied", False))}

    async def _declare_launch(self, uri: str, kernel: str) -> types.WorkspaceEdit | None:
        """The edit inserting a compile-verified launch of `kernel`, or None (the reason is shown)."""
        s = self.session
        doc = s.docs.get(uri)
        root = s.root_for(doc.path) if doc is not None and doc.path is not None else None
        if doc is None or doc.path is None or root is None:
            self.editor.show(f"tilelens: cannot declare a launch of {kernel}: the file is not open in a workspace "
                             "folder tilelens analyses", types.MessageType.Warning)
            return None
        found = await s.workers.lane.submit(self._suggest, doc.path, root, kernel)
        if found is None or not found.lines:
            why = found.error if found is not None else "the analysis worker is not running"
            self.editor.show(f"tilelens: {why}", types.MessageType.Warning)
            return None
        text = self.editor.text(uri)
        edit = codeactions.declare_launch_edit(text, kernel, found.lines, self.editor.units)
        if edit is None:
            self.editor.show(f"tilelens: {kernel} is no longer in the file as edited", types.MessageType.Warning)
            return None
        self.editor.log(f"declared an example launch of {kernel} ({found.tried} candidate(s) compiled to find it)")
        return types.WorkspaceEdit(changes={uri: [edit]})

    def _suggest(self, path: Any, root: Any, kernel: str) -> Suggestion | None:  # in the lane
        s = self.session
        worker = s.workers.worker
        if worker is None or s.closing:
            return None
        found = worker.suggest(path, root, [kernel], settings=s.settings)
        s.workers.after_analysis(worker)
        return found[0] if found else Suggestion(kernel, error=f"no kernel named {kernel} in the saved file")

    def code_lenses(self, uri: str) -> list[types.CodeLens] | None:
        s = self.session
        doc = s.docs.get(uri)
        if doc is None:
            return None
        run = s.scheduler.in_flight
        if doc.path is not None and s.root_for(doc.path) is None:
            state = codelens.OUTSIDE
        elif uri in s.scheduler.pending or (run is not None and run.uri == uri):
            state = codelens.PENDING
        else:
            state = codelens.NEVER
        result = doc.published.result if doc.published is not None else None
        return codelens.lenses(uri, self.editor.text(uri), result, state)

    def show_launches(self, uri: Any = None, kernel: Any = None) -> dict[str, Any]:
        doc = self.session.docs.get(str(uri))
        result = doc.published.result if doc is not None and doc.published is not None else None
        info = codelens.summary(result, str(kernel) if kernel else None)
        self.editor.log(info["text"])
        self.editor.show(info["text"])
        return info

    def rerun(self, uri: Any = None) -> dict[str, Any]:
        s = self.session
        doc = s.docs.get(str(uri)) if uri else None
        if doc is not None:
            s.scheduler.schedule(doc)
            return {"scheduled": 1}
        s.scheduler.rerun_all("re-run requested")
        return {"scheduled": len(s.docs)}

    # -- tilelens/stats

    def stats(self) -> dict[str, Any]:
        s = self.session
        workers = s.workers
        worker = workers.worker
        run = s.scheduler.in_flight
        return {"compiles": workers.total("compiles"), "cache_hits": workers.total("cache_hits"),
                "summarized": workers.total("summarized"), "enumerated": workers.total("enumerated"),
                "worker_restarts": max(0, len(workers.hellos) - 1),
                "worker_pid": worker.pid() if worker is not None else None,
                "worker_alive": bool(worker is not None and worker.alive()),
                "worker_error": workers.error,
                **s.counters, "open_documents": len(s.docs),
                "in_flight": run.path.name if run is not None else None,
                "settings": {"target": s.settings.target, "timeout": s.settings.timeout,
                             "clients": list(s.settings.clients), "interpreter": s.settings.interpreter}}
