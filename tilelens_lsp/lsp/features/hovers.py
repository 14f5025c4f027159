"""textDocument/hover: what the analysis found at a line of the last published result, followed
through the edits since (linemap.py), as Markdown or plain text as the client asks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from tilelens_lsp.lsp import hover as content
from tilelens_lsp.lsp import linemap

if TYPE_CHECKING:
    from tilelens_lsp.lsp.editor import Editor
    from tilelens_lsp.lsp.session import Session


def hover(session: "Session", editor: "Editor", params: types.HoverParams) -> types.Hover | None:
    doc = session.docs.get(params.text_document.uri)
    if doc is None or doc.published is None:
        return None
    pub = doc.published
    line_map = pub.tracked.map if pub.tracked is not None else linemap.diff_map(pub.text, editor.text(doc.uri))
    markdown = content.hover_after_edits(pub.result, pub.rel, pub.text, line_map, params.position.line + 1, pub.label)
    if markdown is None:
        return None
    kinds = editor.cap("text_document.hover.content_format", None) or [types.MarkupKind.Markdown]
    if types.MarkupKind.Markdown in kinds:
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.PlainText, value=content.plaintext(markdown)))
