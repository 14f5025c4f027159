"""Analysis results → LSP diagnostics: ranges from the document's `ast`, launch labels, call stacks;
and directive help records (directive_help.py) → completion items, signature help and ranges.

Pure functions over model records and document text; the server decides when to publish. Columns
from the analysis are 1-based UTF-8 byte offsets (Triton's locs take them from `ast`); they leave
here in the client's position units. Nothing here talks to a client or a worker.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from lsprotocol import types

from tilelens_lsp.diagnostics import LSP_SEVERITY
from tilelens_lsp.lsp import linemap
from tilelens_lsp.model import Diagnostic, FileResult, Frame, LaunchResult, code_url
from tilelens_lsp.textlines import split_lines

SOURCE = "tilelens"

_SEVERITY = {name: types.DiagnosticSeverity(number) for name, number in LSP_SEVERITY.items()}

# Codes whose location is a memory access: their range is the whole `tl.load(...)` call.
_ACCESS_CODES = frozenset({"TL001", "TL002", "TL030"})

Units = Callable[[str], int]


def utf16_units(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


# ---------------------------------------------------------------- ranges


@dataclass(frozen=True)
class Span:
    """0-based lines, 0-based byte columns, end exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int


class ExpressionIndex:
    """Expressions of one source text by their start (line, byte column), for diagnostic ranges."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)  # LSP's breaks: not str.splitlines()
        self._calls: dict[tuple[int, int], Span] = {}
        self._exprs: dict[tuple[int, int], Span] = {}
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        for node in ast.walk(tree):
            if not isinstance(node, ast.expr) or node.end_lineno is None or node.end_col_offset is None:
                continue
            key = (node.lineno - 1, node.col_offset)
            span = Span(node.lineno - 1, node.col_offset, node.end_lineno - 1, node.end_col_offset)
            # The largest expression starting here; calls also separately, for access codes.
            if key not in self._exprs or _longer(span, self._exprs[key]):
                self._exprs[key] = span
            if isinstance(node, ast.Call) and (key not in self._calls or _longer(span, self._calls[key])):
                self._calls[key] = span

    def span(self, line: int, col: int, prefer_call: bool) -> Span:
        """The expression starting at 0-based (line, byte col), else the token or rest of the line."""
        key = (line, col)
        found = (self._calls.get(key) if prefer_call else None) or self._exprs.get(key)
        if found is not None:
            return found
        return self._fallback(line, col)

    def _fallback(self, line: int, col: int) -> Span:
        if not 0 <= line < len(self.lines):
            return Span(line, 0, line, 0)
        raw = self.lines[line].encode("utf-8")
        if col >= len(raw.rstrip()):
            stripped = raw.rstrip()
            start = len(raw) - len(raw.lstrip())
            return Span(line, start, line, max(start, len(stripped)))
        return Span(line, col, line, col + _expression_extent(raw[col:]))


def _longer(a: Span, b: Span) -> bool:
    return (a.end_line, a.end_col) > (b.end_line, b.end_col)


def _expression_extent(rest: bytes) -> int:
    """Bytes of `rest` up to the end of the expression it starts: balanced brackets, no comment."""
    depth, quote, i, end = 0, 0, 0, 0
    while i < len(rest):
        c = rest[i]
        if quote:
            if c == 0x5C:  # backslash
                i += 2
                continue
            if c == quote:
                quote = 0
        elif c in b"'\"":
            quote = c
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            if depth == 0:
                break
            depth -= 1
        elif c == 0x23 or (c in b",;" and depth == 0):  # '#' starts a comment
            break
        i += 1
        if c not in b" \t":
            end = i
    return max(end, 1)


@lru_cache(maxsize=32)
def expression_index(text: str) -> ExpressionIndex:
    return ExpressionIndex(text)


def to_client_range(index: ExpressionIndex, span: Span, units: Units) -> types.Range:
    return types.Range(
        start=_position(index, span.line, span.col, units), end=_position(index, span.end_line, span.end_col, units)
    )


def _position(index: ExpressionIndex, line: int, byte_col: int, units: Units) -> types.Position:
    line = max(0, line)
    if line >= len(index.lines):
        return types.Position(line=line, character=0)
    raw = index.lines[line].encode("utf-8")
    prefix = raw[: max(0, byte_col)].decode("utf-8", errors="ignore")
    return types.Position(line=line, character=units(prefix))


def frame_range(index: ExpressionIndex, line: int, column: int, code: str, units: Units) -> types.Range:
    """The LSP range of a 1-based (line, byte column) location."""
    span = index.span(line - 1, max(0, column - 1), code in _ACCESS_CODES)
    return to_client_range(index, span, units)


# ---------------------------------------------------------------- launch labels


def launch_labels(result: FileResult) -> list[str]:
    """A short name per launch: the kernel, plus only the config keys that vary among its launches."""
    by_kernel: dict[str, list[LaunchResult]] = {}
    for launch in result.launches:
        by_kernel.setdefault(launch.kernel, []).append(launch)
    labels = []
    for launch in result.launches:
        siblings = by_kernel[launch.kernel]
        keys = [k for k in launch.config if len({repr(s.config.get(k)) for s in siblings}) > 1]
        label = launch.kernel
        if keys:
            label += "[" + ", ".join(f"{k}={_short(launch.config[k])}" for k in keys) + "]"
        labels.append(label)
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return [
        f"{label} ({_declared_at(launch, result)})" if counts[label] > 1 or _in_toml(launch, result) else label
        for label, launch in zip(labels, result.launches)
    ]


def _in_toml(launch: LaunchResult, result: FileResult) -> bool:
    return launch.origin is not None and bool(launch.origin.path) and launch.origin.path != result.path


def _declared_at(launch: LaunchResult, result: FileResult) -> str:
    """`line 5` for a directive of this file, `tilelens.toml:5` for a toml table (its line is the toml's)."""
    origin = launch.origin
    if origin is not None and _in_toml(launch, result):
        return f"{origin.path}:{origin.line}"
    return f"line {launch.line}"


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:21] + "..."


# ---------------------------------------------------------------- diagnostics


@dataclass(frozen=True)
class DocumentContext:
    """What a conversion needs to know about the document and the workspace."""

    uri: str
    rel: str  # the document's portable (workspace-relative) path
    text: str
    root: Path | None
    related_support: bool = True
    units: Units = utf16_units


def to_lsp_diagnostics(result: FileResult, ctx: DocumentContext) -> list[types.Diagnostic]:
    """Every verdict of `result` as LSP diagnostics on the document, identical ones merged."""
    labels = launch_labels(result)
    several = len(result.launches) > 1
    entries: list[tuple[Diagnostic, str | None, str | None]] = [(d, None, None) for d in result.diagnostics]
    for launch, launch_label in zip(result.launches, labels):
        entries.extend((d, launch_label, launch.kernel) for d in launch.diagnostics)
    if not entries:
        return []  # nothing to place: the text's expressions are indexed when a diagnostic needs them
    index = expression_index(ctx.text)

    # (diagnostic, anchor frame, related frames, message, launch label, kernel)
    placed: list[tuple[Diagnostic, Frame, list[tuple[Frame, str]], str, str | None, str | None]] = []
    for diag, label, kernel in entries:
        anchor, related = _anchor(diag, ctx)
        placed.append((diag, anchor, related, diag.message, label, kernel))
        # A helper defined in this document: its call sites here get the diagnostic too.
        for site in _call_sites(diag, anchor, ctx):
            placed.append(
                (
                    diag,
                    site,
                    [(anchor, "the access, inside the called helper")],
                    f"{diag.message} (through this call; the access is on line {anchor.line})",
                    label,
                    kernel,
                )
            )

    merged: dict[tuple, list] = {}
    order: list[tuple] = []
    for diag, anchor, related, message, label, kernel in placed:
        rng = frame_range(index, anchor.line, anchor.column, diag.code, ctx.units)
        if diag.end_line and diag.end_line >= diag.line and (anchor.line, anchor.column) == (diag.line, diag.column):
            # A directive spread over several comment lines: cover all of them.
            end_col = (
                diag.end_column - 1
                if diag.end_column
                else len(index.lines[diag.end_line - 1].encode("utf-8"))
                if diag.end_line <= len(index.lines)
                else 0
            )
            rng = types.Range(start=rng.start, end=_position(index, diag.end_line - 1, end_col, ctx.units))
        key = (diag.code, rng.start.line, rng.start.character, rng.end.line, rng.end.character, message)
        if key not in merged:
            merged[key] = [diag, rng, related, message, []]
            order.append(key)
        if label is not None:
            merged[key][4].append((label, kernel))

    out = []
    for key in order:
        diag, rng, related, message, launches = merged[key]
        if launches and (several or len(launches) > 1):
            message = f"{_prefix(launches)}: {message}"
        out.append(_lsp_diagnostic(diag, rng, message, related, launches, ctx, index))
    return out


CHANGED_SINCE = " (found in the saved file; this line has unsaved changes)"


def onto_buffer(
    diagnostics: list[types.Diagnostic], uri: str, tracked: linemap.Tracked, units: Units = utf16_units
) -> list[types.Diagnostic]:
    """Diagnostics made on the analysed text (`tracked.base`, a `linemap.Tracked`) placed on the
    document as the editor has it now (`tracked.text`): a statement's verdict on the line that holds
    that statement, however many unsaved lines came before it. A verdict whose line was edited since
    goes on the line it became, whole, and says so; one whose line was deleted, on the next line."""
    if tracked.base == tracked.text:
        return diagnostics
    where = linemap.placer(tracked.map)
    before, lines = split_lines(tracked.base), split_lines(tracked.text)

    def moved(rng: types.Range) -> tuple[types.Range, bool]:
        (start, exact_start), (end, exact_end) = where(rng.start.line), where(rng.end.line)
        same = types.Range(types.Position(start, rng.start.character), types.Position(end, rng.end.character))
        if exact_start and exact_end and end >= start:
            return same, True
        now = lines[start] if start < len(lines) else ""
        if rng.start.line == rng.end.line < len(before) and start == end:
            old = before[rng.start.line]
            upto = column_from_units(old, rng.end.character, units)
            if now[:upto] == old[:upto]:  # edited after the expression (a comment added): it is where it was
                return same, False
        return types.Range(types.Position(start, 0), types.Position(start, units(now))), False

    out = []
    for d in diagnostics:
        placed = copy.copy(d)  # every field kept; the positions and the message are the placed ones
        placed.range, exact = moved(d.range)
        if not exact:
            placed.message = d.message + CHANGED_SINCE
        if d.related_information is not None:
            placed.related_information = [
                types.DiagnosticRelatedInformation(types.Location(r.location.uri, moved(r.location.range)[0]), r.message)
                if r.location.uri == uri
                else r
                for r in d.related_information
            ]
        out.append(placed)
    return out


def _prefix(launches: list[tuple[str, str]]) -> str:
    if len(launches) == 1:
        return launches[0][0]
    kernels = {k for _, k in launches}
    if len(kernels) == 1:
        return f"{next(iter(kernels))} ({len(launches)} configs)"
    return f"{len(launches)} launches"


def _anchor(diag: Diagnostic, ctx: DocumentContext) -> tuple[Frame, list[tuple[Frame, str]]]:
    """Where the diagnostic lands in this document, and the other frames with what they are.

    The innermost frame in the document wins; frames inside it (a helper in another file) and
    outside it (callers) become related information.
    """
    stack = diag.stack
    here = [i for i, f in enumerate(stack) if _same_path(f.path, ctx.rel)]
    if not stack:
        return Frame(ctx.rel, diag.line, diag.column), []
    if not here:
        # Nothing of the stack is in this document (e.g. a launch declared in a toml): file level.
        return Frame(ctx.rel, 1, 1), [(f, "reported here") for f in stack]
    k = here[0]
    related = []
    for i, frame in enumerate(stack):
        if i < k:
            related.append((frame, "the access, inside the called helper" if i == 0 else "through this call"))
        elif i > k:
            related.append((frame, "called from here"))
    return stack[k], related


def _call_sites(diag: Diagnostic, anchor: Frame, ctx: DocumentContext) -> list[Frame]:
    """Frames of this document outside the anchor frame (callers of a helper defined here)."""
    stack = list(diag.stack)
    if anchor not in stack:
        return []
    k = stack.index(anchor)
    return [f for f in stack[k + 1 :] if _same_path(f.path, ctx.rel) and (f.line, f.column) != (anchor.line, anchor.column)]


def _same_path(frame_path: str, rel: str) -> bool:
    return frame_path == rel or (not frame_path and not rel)


def _lsp_diagnostic(
    diag: Diagnostic,
    rng: types.Range,
    message: str,
    related: list[tuple[Frame, str]],
    launches: list[tuple[str, str]],
    ctx: DocumentContext,
    index: ExpressionIndex,
) -> types.Diagnostic:
    data: dict[str, Any] = {"code": diag.code}
    if diag.witness is not None:
        data["witness"] = diag.witness.to_json()
    if diag.kind:
        data["kind"] = diag.kind
    if launches:
        data["launches"] = [label for label, _ in launches]
    if diag.stack:
        data["stack"] = [f.to_json() for f in diag.stack]
    related_info = None
    if ctx.related_support and related:
        related_info = [info for info in (_related(f, why, ctx, index) for f, why in related) if info]
    return types.Diagnostic(
        range=rng,
        message=message,
        severity=_SEVERITY.get(diag.severity, types.DiagnosticSeverity.Warning),
        code=diag.code,
        code_description=types.CodeDescription(href=code_url(diag.code)),
        source=SOURCE,
        related_information=related_info or None,
        data=data,
    )


def _related(
    frame: Frame, why: str, ctx: DocumentContext, index: ExpressionIndex
) -> types.DiagnosticRelatedInformation | None:
    if _same_path(frame.path, ctx.rel):
        uri, other = ctx.uri, index
    else:
        path = resolve_portable(frame.path, ctx.root)
        if path is None:
            return None
        uri = path.as_uri()
        other = _file_index(str(path))
    rng = frame_range(other, frame.line, frame.column, "", ctx.units)
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri, range=rng), message=f"{why} ({frame.path}:{frame.line})"
    )


def _file_index(path: str) -> ExpressionIndex:
    try:
        if os.path.getsize(path) > 2_000_000:
            return ExpressionIndex("")
        return expression_index(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ExpressionIndex("")


def resolve_portable(portable: str, root: Path | None) -> Path | None:
    """A portable path (ttir/locs.py) back to an existing file: workspace-relative, or Triton's."""
    if not portable:
        return None
    if os.path.isabs(portable):
        return Path(portable) if os.path.isfile(portable) else None
    if root is not None and (root / portable).is_file():
        return (root / portable).resolve()
    if portable.startswith("triton/"):
        base = _triton_dir()
        if base is not None and (base / portable[len("triton/") :]).is_file():
            return base / portable[len("triton/") :]
    return None


@lru_cache(maxsize=1)
def _triton_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def summary(result: FileResult) -> str:
    """`3 launches, 1 diagnostic` for the run log."""
    n_launch = len(result.launches)
    n_diag = len(result.all_diagnostics())
    return f"{n_launch} launch{'es' if n_launch != 1 else ''}, {n_diag} diagnostic{'s' if n_diag != 1 else ''}"


# ---------------------------------------------------------------- directive help → LSP (directive_help.py)


_ITEM_KINDS = {
    "kernel": types.CompletionItemKind.Function,
    "function": types.CompletionItemKind.Function,
    "parameter": types.CompletionItemKind.Property,
    "dtype": types.CompletionItemKind.TypeParameter,
    "name": types.CompletionItemKind.Variable,
    "attribute": types.CompletionItemKind.Property,
    "code": types.CompletionItemKind.EnumMember,
}


def to_completion_list(items: list[Any]) -> types.CompletionList:
    """`directive_help.Item`s in their order (sort_text keeps it: kernels and keywords first)."""
    return types.CompletionList(
        is_incomplete=False,
        items=[
            types.CompletionItem(
                label=item.label,
                kind=_ITEM_KINDS.get(item.kind, types.CompletionItemKind.Text),
                detail=item.detail or None,
                insert_text=item.insert_text,
                filter_text=item.label.rstrip("="),
                sort_text=f"{item.sort}{i:04d}",
            )
            for i, item in enumerate(items)
        ],
    )


def to_signature_help(sig: Any, units: Units) -> types.SignatureHelp:
    """A `directive_help.Signature`; parameter offsets leave here in the client's units."""
    params = [
        types.ParameterInformation(label=(units(sig.label[:start]), units(sig.label[:end])), documentation=doc or None)
        for start, end, doc in sig.parameters
    ]
    info = types.SignatureInformation(
        label=sig.label,
        parameters=params,
        active_parameter=sig.active,
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=sig.documentation)
        if sig.documentation
        else None,
    )
    return types.SignatureHelp(signatures=[info], active_signature=0, active_parameter=sig.active)


def target_range(text: str, target: Any, units: Units) -> types.Range:
    """A `directive_help.Target` (character columns) as a range in the client's units."""
    lines = split_lines(text)
    line = lines[target.line] if target.line < len(lines) else ""
    return types.Range(
        start=types.Position(line=target.line, character=units(line[: target.start])),
        end=types.Position(line=target.line, character=units(line[: target.end])),
    )


def column_from_units(line: str, character: int, units: Units) -> int:
    """A client column (in its position units) as an index into `line`, clamped to the line."""
    if line.isascii():
        return min(max(character, 0), len(line))
    count = 0
    for index, char in enumerate(line):
        if count >= character:
            return index
        count += units(char)
    return len(line)
