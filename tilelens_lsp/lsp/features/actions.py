"""textDocument/codeAction and its resolve step, and the `tilelens.declareLaunch` command.

The quick fixes come from codeactions.py. TL100's fix (declare an example launch) needs the worker:
the analysis finds and compiles a launch of the kernel (suggest.py, in the worker's lane), and the
edit is computed against the text as edited since; clients that cannot resolve an action's edit get
the command form, whose edit is applied through the editor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tilelens_lsp.lsp import codeactions

if TYPE_CHECKING:
    from tilelens_lsp.lsp.analysis import Analysis
    from tilelens_lsp.lsp.editor import Editor
    from tilelens_lsp.lsp.session import Session


def code_actions(session: "Session", editor: "Editor", params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    resolvable = "edit" in (editor.cap("text_document.code_action.resolve_support.properties", None) or [])
    return (
        codeactions.code_actions(
            uri, editor.text(uri), list(params.context.diagnostics or []), editor.units, params.context.only, resolvable
        )
        or None
    )


async def resolve_code_action(
    session: "Session", editor: "Editor", analysis: "Analysis", action: types.CodeAction
) -> types.CodeAction:
    request = codeactions.declare_launch_request(action)
    if request is None:
        return action
    edit = await _declare_launch(session, editor, analysis, *request)
    if edit is not None:
        action.edit = edit
    return action


async def declare_launch(
    session: "Session", editor: "Editor", analysis: "Analysis", uri: Any = None, kernel: Any = None
) -> dict[str, Any]:
    """The command form (clients that cannot resolve an action's edit): find it and apply it."""
    edit = await _declare_launch(session, editor, analysis, str(uri), str(kernel))
    if edit is None:
        return {"applied": False}
    return {"applied": await editor.apply_edit(edit, f"Declare an example launch of {kernel}")}


async def _declare_launch(
    session: "Session", editor: "Editor", analysis: "Analysis", uri: str, kernel: str
) -> types.WorkspaceEdit | None:
    """The edit inserting a compile-verified launch of `kernel`, or None (the reason is shown)."""
    doc = session.docs.get(uri)
    root = session.root_for(doc.path) if doc is not None and doc.path is not None else None
    if doc is None or doc.path is None or root is None:
        editor.show(
            f"tilelens: cannot declare a launch of {kernel}: the file is not open in a workspace folder tilelens analyses",
            types.MessageType.Warning,
        )
        return None
    found = await analysis.suggest(doc.path, root, kernel)
    if found is None or not found.lines:
        why = found.error if found is not None else "the analysis worker is not running"
        editor.show(f"tilelens: {why}", types.MessageType.Warning)
        return None
    text = editor.text(uri)
    edit = codeactions.declare_launch_edit(text, kernel, found.lines, editor.units)
    if edit is None:
        editor.show(f"tilelens: {kernel} is no longer in the file as edited", types.MessageType.Warning)
        return None
    editor.log(f"declared an example launch of {kernel} ({found.tried} candidate(s) compiled to find it)")
    return types.WorkspaceEdit(changes={uri: [edit]})
