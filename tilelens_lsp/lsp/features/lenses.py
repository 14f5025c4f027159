"""textDocument/codeLens (a verdict line above each kernel, codelens.py) and its two commands:
show a kernel's launches, and re-run a document (or all of them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tilelens_lsp.lsp import codelens

if TYPE_CHECKING:
    from tilelens_lsp.lsp.analysis import Analysis
    from tilelens_lsp.lsp.editor import Editor
    from tilelens_lsp.lsp.session import Session


def code_lenses(session: "Session", editor: "Editor", analysis: "Analysis", uri: str) -> list[types.CodeLens] | None:
    doc = session.docs.get(uri)
    if doc is None:
        return None
    if doc.path is not None and session.root_for(doc.path) is None:
        state = codelens.OUTSIDE
    elif analysis.busy_with(uri):
        state = codelens.PENDING
    else:
        state = codelens.NEVER
    result = doc.published.result if doc.published is not None else None
    return codelens.lenses(uri, editor.text(uri), result, state)


def show_launches(session: "Session", editor: "Editor", uri: Any = None, kernel: Any = None) -> dict[str, Any]:
    doc = session.docs.get(str(uri))
    result = doc.published.result if doc is not None and doc.published is not None else None
    info = codelens.summary(result, str(kernel) if kernel else None)
    editor.log(info["text"])
    editor.show(info["text"])
    return info


def rerun(session: "Session", analysis: "Analysis", uri: Any = None) -> dict[str, Any]:
    doc = session.docs.get(str(uri)) if uri else None
    if doc is not None:
        analysis.schedule(doc)
        return {"scheduled": 1}
    analysis.rerun_all("re-run requested")
    return {"scheduled": len(session.docs)}
