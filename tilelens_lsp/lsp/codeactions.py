"""Quick fixes for tilelens diagnostics: 64-bit offsets (TL003), "did you mean" (TL020), suppression.

Pure functions from the document text and the diagnostics the client sends back to `CodeAction`s with
their edits; each fix is computed from the current text (a stale diagnostic whose code has moved gets
no fix rather than a wrong one). TL100's fix, an example launch, is only worth inserting if it compiles,
which needs the worker: here it is an action without its edit (filled in by `codeAction/resolve`, or a
command for clients that cannot resolve edits), and `declare_launch_edit` places the lines the worker
found once they come back.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from lsprotocol import types

from tilelens_lsp import suppress
from tilelens_lsp.launches.kernels import kernel_head
from tilelens_lsp.lsp import convert
from tilelens_lsp.lsp.convert import SOURCE, Span, expression_index, to_client_range
from tilelens_lsp.textlines import split_lines

Units = Callable[[str], int]

_OVERFLOW_OP = re.compile(r"overflow in address arithmetic: (\w+) gives")
_OPS: dict[str, tuple[type, ...]] = {
    "mul": (ast.Mult,),
    "add": (ast.Add,),
    "sub": (ast.Sub,),
    "shl": (ast.LShift,),
    "div": (ast.FloorDiv, ast.Div),
    "rem": (ast.Mod,),
    "divs": (ast.FloorDiv,),
    "rems": (ast.Mod,),
}
_DID_YOU_MEAN = re.compile(r"unknown (?:name|dtype|kernel|parameter) '(?P<old>\w+)'.*?did you mean '?(?P<new>\w+)'?\?")
_NOT_SUPPRESSIBLE = frozenset({suppress.UNUSED, "TL040", "TL050"})
_UNDECLARED = re.compile(r"^(?P<kernel>\w+) has no declared launch")
DECLARE_LAUNCH = "tilelens.declareLaunch"  # the command behind TL100's fix where edits cannot be resolved


def code_actions(
    uri: str,
    text: str,
    diagnostics: list[types.Diagnostic],
    units: Units = convert.utf16_units,
    only: Sequence[str] | None = None,
    resolve_edits: bool = True,
) -> list[types.CodeAction]:
    """The quick fixes for the tilelens diagnostics among `diagnostics` (those the client sent).
    `resolve_edits`: the client resolves a code action's edit lazily (else TL100's fix is a command)."""
    if only is not None and not any(types.CodeActionKind.QuickFix.value.startswith(k) for k in only):
        return []
    lines = split_lines(text)
    actions: list[types.CodeAction] = []
    suppressions: list[types.CodeAction] = []
    for diag in diagnostics:
        if diag.source != SOURCE or not isinstance(diag.code, str):
            continue
        fix = None
        if diag.code == "TL003":
            fix = _int64_fix(uri, text, diag, units)
        elif diag.code == "TL020":
            fix = _did_you_mean_fix(uri, lines, diag, units)
        elif diag.code == "TL100":
            fix = _declare_launch_action(uri, diag, resolve_edits)
        if fix is not None:
            actions.append(fix)
        if diag.code not in _NOT_SUPPRESSIBLE:
            action = _suppress_fix(uri, lines, diag, units)
            if action is not None and all(a.title != action.title for a in suppressions):
                suppressions.append(action)
    return actions + suppressions


# ---------------------------------------------------------------- positions


def _char_index(line: str, client_char: int, units: Units) -> int:
    """Python index into `line` of a client character offset."""
    count = 0
    for i, ch in enumerate(line):
        if count >= client_char:
            return i
        count += units(ch)
    return len(line)


def _byte_col(lines: list[str], pos: types.Position, units: Units) -> int:
    line = lines[pos.line] if 0 <= pos.line < len(lines) else ""
    return len(line[: _char_index(line, pos.character, units)].encode("utf-8"))


def _edit(text: str, line: int, start: int, end: int, new: str, units: Units) -> types.TextEdit:
    """A TextEdit replacing 0-based `line`'s bytes [start, end) with `new`."""
    rng = to_client_range(expression_index(text), Span(line, start, line, end), units)
    return types.TextEdit(range=rng, new_text=new)


def _action(title: str, uri: str, edits: list[types.TextEdit], diag: types.Diagnostic, preferred: bool) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=preferred or None,
        edit=types.WorkspaceEdit(changes={uri: edits}),
    )


# ---------------------------------------------------------------- TL003: compute in 64 bits


def _int64_fix(uri: str, text: str, diag: types.Diagnostic, units: Units) -> types.CodeAction | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = split_lines(text)
    lineno, col = diag.range.start.line + 1, _byte_col(lines, diag.range.start, units)
    at = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and (n.lineno, n.col_offset) == (lineno, col)]
    m = _OVERFLOW_OP.search(diag.message)
    wanted = _OPS.get(m.group(1), ()) if m else ()
    matching = [n for n in at if isinstance(n.op, wanted)] or at
    if not matching:
        return None
    node = min(matching, key=lambda n: (n.end_lineno, n.end_col_offset))  # the innermost
    operand = _operand_to_widen(node, _program_ids(tree, lineno))
    if operand is None:
        return None
    int64 = f"{_language_alias(tree)}.int64"
    src = ast.get_source_segment(text, operand) or "operand"
    end_line, end_col = operand.end_lineno or operand.lineno, operand.end_col_offset or operand.col_offset
    if isinstance(operand, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        edits = [_edit(text, end_line - 1, end_col, end_col, f".to({int64})", units)]
        shown = f"{src}.to({int64})"
    else:
        edits = [
            _edit(text, operand.lineno - 1, operand.col_offset, operand.col_offset, "(", units),
            _edit(text, end_line - 1, end_col, end_col, f").to({int64})", units),
        ]
        shown = f"({src}).to({int64})"
    return _action(f"Compute in 64 bits: {shown}", uri, edits, diag, preferred=True)


def _operand_to_widen(node: ast.BinOp, pid_names: set[str]) -> ast.expr | None:
    """The leaf of the arithmetic to cast: a program id (or a name bound to one) first, else the first
    operand that is not a constant. Casting any leaf makes every operation above it 64-bit."""
    leaves: list[ast.expr] = []

    def walk(n: ast.expr) -> None:
        if isinstance(n, ast.BinOp):
            walk(n.left)
            walk(n.right)
        else:
            leaves.append(n)

    walk(node)
    candidates = [n for n in leaves if not isinstance(n, ast.Constant)]
    for n in candidates:
        if _is_program_id(n) or (isinstance(n, ast.Name) and n.id in pid_names):
            return n
    return candidates[0] if candidates else None


def _is_program_id(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.Call)
        and isinstance(n.func, (ast.Attribute, ast.Name))
        and getattr(n.func, "attr", getattr(n.func, "id", "")) == "program_id"
    )


def _program_ids(tree: ast.Module, lineno: int) -> set[str]:
    """Names assigned a program id in the function around `lineno`."""
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.lineno <= lineno <= (fn.end_lineno or 0):
            return {
                t.id
                for n in ast.walk(fn)
                if isinstance(n, ast.Assign) and _is_program_id(n.value)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
    return set()


def _language_alias(tree: ast.Module) -> str:
    """How the file names `triton.language` (`tl` by convention)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name == "triton.language":
                    return a.asname or "triton.language"
        elif isinstance(n, ast.ImportFrom) and n.module == "triton":
            for a in n.names:
                if a.name == "language":
                    return a.asname or "language"
    return "tl"


# ---------------------------------------------------------------- TL020: did you mean


def _did_you_mean_fix(uri: str, lines: list[str], diag: types.Diagnostic, units: Units) -> types.CodeAction | None:
    m = _DID_YOU_MEAN.search(diag.message)
    if m is None:
        return None
    old, new = m.group("old"), m.group("new")
    word = re.compile(rf"(?<![\w.]){re.escape(old)}(?!\w)")
    start, end = diag.range.start, diag.range.end
    for line in range(start.line, min(end.line, len(lines) - 1) + 1):
        text = lines[line]
        lo = _char_index(text, start.character, units) if line == start.line else 0
        hit = word.search(text, lo)
        if hit is None:
            continue
        b0, b1 = len(text[: hit.start()].encode("utf-8")), len(text[: hit.end()].encode("utf-8"))
        edit = _edit("\n".join(lines), line, b0, b1, new, units)
        return _action(f"Replace '{old}' with '{new}'", uri, [edit], diag, preferred=True)
    return None


# ---------------------------------------------------------------- any code: suppress on this line


def _suppress_fix(uri: str, lines: list[str], diag: types.Diagnostic, units: Units) -> types.CodeAction | None:
    code = str(diag.code)
    line = diag.range.start.line
    if not 0 <= line < len(lines):
        return None
    text = "\n".join(lines)
    current = lines[line]
    title = f"Suppress {code} on this line (# tilelens: ignore[{code}])"
    existing = [s for s in suppress.find(text) if s.line == line + 1 and line + 1 in s.targets]
    if existing:
        s = existing[0]
        if s.codes is None or code in s.codes:
            return None
        start, end = s.column - 1, s.end_column - 1
        new = f"# tilelens: ignore[{', '.join(s.codes + (code,))}]"
        return _action(title, uri, [_edit(text, line, start, end, new, units)], diag, preferred=False)
    body = current.rstrip()
    if body.endswith("\\"):
        # A backslash continuation cannot take a comment: put it alone on the line above.
        indent = current[: len(current) - len(current.lstrip())]
        edit = _edit(text, line, 0, 0, f"{indent}# tilelens: ignore[{code}]\n", units)
    else:
        end = len(body.encode("utf-8"))
        edit = _edit(text, line, end, len(current.encode("utf-8")), f"  # tilelens: ignore[{code}]", units)
    return _action(title, uri, [edit], diag, preferred=False)


# ---------------------------------------------------------------- TL100: declare an example launch


def _declare_launch_action(uri: str, diag: types.Diagnostic, resolve_edits: bool) -> types.CodeAction | None:
    m = _UNDECLARED.match(diag.message)
    if m is None:
        return None
    kernel = m.group("kernel")
    title = f"Declare an example launch of {kernel}"
    action = types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=True)
    if resolve_edits:
        action.data = {"tilelens": "declare-launch", "uri": uri, "kernel": kernel}
    else:
        action.command = types.Command(title=title, command=DECLARE_LAUNCH, arguments=[uri, kernel])
    return action


def declare_launch_request(action: types.CodeAction) -> tuple[str, str] | None:
    """(uri, kernel) of an unresolved TL100 fix; None for any other action."""
    data = action.data
    if isinstance(data, dict) and data.get("tilelens") == "declare-launch":
        uri, kernel = data.get("uri"), data.get("kernel")
        if isinstance(uri, str) and isinstance(kernel, str):
            return uri, kernel
    return None


def declare_launch_edit(text: str, kernel: str, lines: tuple[str, ...], units: Units) -> types.TextEdit | None:
    """`lines` inserted above `kernel`'s first decorator in `text`, indented like it; None when the current
    text has no such function (renamed or deleted since the save)."""
    head = kernel_head(text, kernel)
    if head is None:
        return None
    first, indent = head
    return _edit(text, first - 1, 0, 0, "".join(f"{indent}{x}\n" for x in lines), units)
