"""Inside `# tilelens:` directives: completion, signature help and go to definition (directive_help.py).

They read the document's text as the editor has it now; no analysis result is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tilelens_lsp.lsp import convert, directive_help, linemap

if TYPE_CHECKING:
    from tilelens_lsp.lsp.editor import Editor
    from tilelens_lsp.lsp.session import Session


def completion(session: "Session", editor: "Editor", params: types.CompletionParams) -> types.CompletionList | None:
    text, line, col = _cursor(editor, params)
    items = directive_help.complete(text, line, col) if "tilelens:" in text else None
    return convert.to_completion_list(items) if items is not None else None


def signature_help(session: "Session", editor: "Editor", params: types.SignatureHelpParams) -> types.SignatureHelp | None:
    text, line, col = _cursor(editor, params)
    found = directive_help.signature_help(text, line, col) if "tilelens:" in text else None
    return convert.to_signature_help(found, editor.units) if found is not None else None


def definition(session: "Session", editor: "Editor", params: types.DefinitionParams) -> types.Location | None:
    text, line, col = _cursor(editor, params)
    target = directive_help.definition(text, line, col) if "tilelens:" in text else None
    if target is None:
        return None
    return types.Location(uri=params.text_document.uri, range=convert.target_range(text, target, editor.units))


def _cursor(editor: "Editor", params: Any) -> tuple[str, int, int]:
    """The document's text and the request's position, its column in characters."""
    text = editor.text(params.text_document.uri)
    lines = linemap.split_lines(text)
    position = params.position
    if not 0 <= position.line < len(lines):
        return text, position.line, position.character
    column = convert.column_from_units(lines[position.line], position.character, editor.units)
    return text, position.line, column
