"""Hover text: the footprint of the accesses on a line, per launch/config, as Markdown lists (or plain text).

Reads only stored `FileResult`s (never a worker), so a hover answers while an analysis runs or hangs.
A view with one or two dimensions also gets a small map of which of its elements the access touches.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tilelens_lsp.lsp.convert import launch_labels
from tilelens_lsp.lsp.linemap import LineMap, split_lines
from tilelens_lsp.model import Access, Diagnostic, FileResult, LaunchResult, Witness, format_values

FULL, SOME, NONE, OUT, VIEW_OUT = "█", "▒", "·", "✗", "◇"
MAX_ROWS, MAX_COLS, BAR_CELLS = 16, 32, 32
MAX_MAPS = 2  # maps shown per hover (a file with many autotune configs would scroll forever)
_ROW_SAMPLE = 4096  # rows scanned exactly per map; beyond that rows are sampled evenly


def hover_markdown(
    result: FileResult, rel: str, line: int, line_text: str = "", shown_line: int | None = None
) -> str | None:
    """Markdown for a hover on 1-based `line` of the document whose portable path is `rel`
    (`shown_line`: the number the line has in the editor now, when unsaved edits moved it)."""
    labels = launch_labels(result)
    rows: list[tuple[str, LaunchResult, Access]] = []
    for launch, label in zip(result.launches, labels):
        for access in launch.accesses:
            if access.line == line and (access.path or rel) == rel:
                rows.append((label, launch, access))
    refused = [
        (label, d)
        for launch, label in zip(result.launches, labels)
        for d in launch.diagnostics
        if d.code == "TL030" and d.line == line and (not d.stack or d.stack[0].path in ("", rel))
    ]
    if rows:
        markdown = _access_hover(rows, shown_line or line)
        return markdown + "\n\n" + _refusal_hover(refused, shown_line or line) if refused else markdown
    if refused:
        return _refusal_hover(refused, shown_line or line)
    if "tilelens:" in line_text:
        launches = [(label, launch) for launch, label in zip(result.launches, labels) if launch.line == line]
        if launches:
            return _launch_hover(launches)
    return None


def hover_after_edits(
    result: FileResult, rel: str, analysed_text: str, line_map: LineMap, line: int, analysed_as: str
) -> str | None:
    """Hover on 1-based `line` of the document as it is now, from the result of `analysed_text`.

    `line_map` says where each current line came from (linemap.py). A line that is an unchanged copy
    of an analysed line shows that line's hover; a line whose text changed since says so instead of
    showing a footprint that may no longer be true; a new line shows nothing. `analysed_as` names the
    analysed version, as in "version 3, saved at 14:02:11".
    """
    lines = split_lines(analysed_text)
    copy, edited = line_map.origin(line - 1)
    if copy is not None:
        text = lines[copy] if copy < len(lines) else ""
        markdown = hover_markdown(result, rel, copy + 1, text, shown_line=line)
        if markdown is not None and copy + 1 != line:
            markdown += (
                f"\n\n*From the analysis of {escape_markdown(analysed_as)}, where this was line {copy + 1}; "
                "unsaved edits since moved it.*"
            )
        return markdown
    stale = sorted(o + 1 for o in edited if o < len(lines) and hover_markdown(result, rel, o + 1, lines[o]) is not None)
    if not stale:
        return None
    where = ("lines " if len(stale) > 1 else "line ") + ", ".join(map(str, stale))
    return (
        f"**tilelens** · this line changed after the analysis of {escape_markdown(analysed_as)} "
        f"({where} there): its footprint is stale and not shown. Save to analyse it again."
    )


# ---------------------------------------------------------------- access table


def _access_hover(rows: list[tuple[str, LaunchResult, Access]], line: int) -> str:
    """One list item per launch/config and access, as `key: value` lines: a Markdown table shows raw
    pipes in clients that do not render tables (Neovim), and a list reads the same everywhere."""
    ops = sorted({_op_name(a.op) for _, _, a in rows})
    per_line: dict[int, set] = {}
    for _, launch, access in rows:
        per_line.setdefault(id(launch), set()).add((access.op, access.pointer))
    several_accesses = any(len(v) > 1 for v in per_line.values())
    out = [f"**tilelens** · {', '.join(f'`{o}`' for o in ops)} on line {line}"]
    shown: set[int] = set()
    for label, launch, access in rows:
        if id(launch) not in shown:
            shown.add(id(launch))
            out += ["", _launch_line(label, launch)]
            out += _launch_notes(launch)
        out += [
            f"- {access.op} `{access.pointer}` ({access.dtype}): {_touched(access)}, "
            f"{_bytes(access.touched * access.element_size) if access.element_size else '? B'}, {_layout(access)}",
            f"  - bounds: {_bounds(access, launch, several_accesses)}",
        ]
        out += [f"  - {escape_markdown(text)}" for text in _access_findings(access, launch)]
    maps = 0
    seen: set[tuple] = set()
    several_launches = len(shown) > 1
    for label, _, access in rows:
        if maps >= MAX_MAPS:
            break
        key = (access.pointer, access.elements, access.view_shape, access.view_strides)
        if key in seen:
            continue
        drawing = footprint_map(access)
        if drawing is None:
            continue
        seen.add(key)
        maps += 1
        title = f"`{label}` · " if several_launches else ""
        out += [
            "",
            f"{title}`{access.pointer}` `{access.dtype}{list(access.view_shape)}`{'' if access.exact else ' (bound)'}:",
            "```text",
            *drawing,
            "```",
        ]
    out += [
        "",
        f"{FULL} all touched, {SOME} some, {NONE} none, {VIEW_OUT} outside the view (inside the "
        f"storage), {OUT} outside the storage. *exact*: these elements are touched; *bound*: a proven "
        "over-approximation.",
    ]
    return "\n".join(out)


def _tuples(v):
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def _refusal_hover(refused: list[tuple[str, Diagnostic]], line: int) -> str:
    """A line whose access was not analysed: why, and what would decide it (the refusal's fix), per launch."""
    out = [f"**tilelens** · not analysed on line {line}"]
    for message, labels in _grouped(refused).items():
        out += ["", f"- {', '.join(f'`{x}`' for x in labels)}: {escape_markdown(message.removeprefix('not analyzed: '))}"]
    return "\n".join(out)


def _grouped(refused: list[tuple[str, Diagnostic]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for label, diag in refused:
        out.setdefault(diag.message, [])
        if label not in out[diag.message]:
            out[diag.message].append(label)
    return out


def _launch_line(label: str, launch: LaunchResult) -> str:
    """`kernel[K=V, ...]` · grid (...) · where it is declared: which launch a group of lines describes.
    Code spans: brackets in them render as themselves everywhere (never a link)."""
    grid = "×".join(str(g) for g in launch.grid) if launch.grid else "?"
    config = ", ".join(f"{k}={v}" for k, v in launch.config.items())
    where = re.search(r" \(([^()]*)\)$", label)
    return (
        f"`{launch.kernel}{f'[{config}]' if config else ''}` · grid ({grid})"
        + (f" · engine {launch.engine}" if launch.engine else "")
        + (f" · declared at {escape_markdown(where.group(1))}" if where else "")
    )


def _access_findings(access: Access, launch: LaunchResult) -> list[str]:
    """Races (both programs and elements) and view over-reads at this access's line."""
    out = []
    for diag in launch.diagnostics:
        if diag.code not in ("TL004", "TL005", "TL006"):
            continue
        frames = [(f.path, f.line) for f in diag.stack] or [(access.path, diag.line)]
        if (access.path, access.line) in frames or diag.line == access.line:
            if diag.code == "TL004" or f" of {access.pointer}" in diag.message or f"{access.pointer} " in diag.message:
                out.append(f"{diag.code}: {diag.message}")
    return list(dict.fromkeys(out))


def _launch_notes(launch: LaunchResult) -> list[str]:
    """The declared value ranges a launch's bounds rest on, and what it could not decide."""
    out = []
    if launch.value_ranges:
        ranges = ", ".join(f"`{name}` ∈ {format_values(_tuples(v))}" for name, v in sorted(launch.value_ranges.items()))
        out += ["", f"declared value ranges: {ranges} (footprints built from them are bounds)"]
    for note in launch.notes:
        out += ["", f"*not decided*: {escape_markdown(note)}"]
    return out


def _op_name(op: str) -> str:
    return {"load": "tl.load", "store": "tl.store"}.get(op, f"tl.{op}" if not op.startswith("atomic") else "tl.atomic_*")


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def escape_markdown(text: str) -> str:
    """Text shown as itself in Markdown: brackets (`kernel[BLOCK=256]` is no link), pipes, emphasis."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def plaintext(markdown: str) -> str:
    """The hover for a client that does not render Markdown: the same lines without the markup."""
    out = []
    for line in markdown.split("\n"):
        if line.startswith("```"):
            continue
        line = line.replace("**", "").replace("`", "")
        line = re.sub(r"(?<![\\\w])\*(\S[^*]*?)\*(?!\w)", r"\1", line)
        out.append(re.sub(r"\\(.)", r"\1", line))
    return "\n".join(out)


def _touched(access: Access) -> str:
    bound = "" if access.exact else "≤ "
    size = f" of {access.view_numel:,}" if access.view_numel else ""
    return f"{bound}{access.touched:,}{size} ({'exact' if access.exact else 'bound'})"


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n:,} B ({n / size:.1f} {unit})"
    return f"{n:,} B"


def _layout(access: Access) -> str:
    if not access.elements:
        return "none"
    if access.contiguous or len(access.elements) == 1:
        return "contiguous"
    return f"{len(access.elements):,} intervals"


def _bounds(access: Access, launch: LaunchResult, several: bool) -> str:
    diag = _witness_diagnostic(access, launch, several)
    if diag is not None:
        sure = "✗ out of bounds" if diag.code == "TL001" else "⚠ possibly out of bounds"
        return f"{sure}: {witness_text(diag.witness)}" if diag.witness else sure
    if any(d.code == "TL004" and d.line == access.line for d in launch.diagnostics):
        return "⚠ inside the storage, outside its view (TL004)"
    if access.in_bounds:
        return "in bounds"
    return "✗ out of bounds" if access.exact else "⚠ possibly out of bounds"


def _witness_diagnostic(access: Access, launch: LaunchResult, several: bool) -> Diagnostic | None:
    candidates = []
    for diag in launch.diagnostics:
        if diag.code not in ("TL001", "TL002"):
            continue
        frames = [(f.path, f.line) for f in diag.stack] or [(access.path, diag.line)]
        if (access.path, access.line) in frames or diag.line == access.line:
            candidates.append(diag)
    if several:
        named = [d for d in candidates if f" of {access.pointer}," in d.message]
        candidates = named or ([] if access.in_bounds else candidates)
    return candidates[0] if candidates else None


def witness_text(w: Witness) -> str:
    parts = [f"program {tuple(w.pid)}"]
    if w.lane:
        parts.append("lane " + ", ".join(str(i) for i in w.lane))
    if w.iteration:
        parts.append("iteration " + ", ".join(str(i) for i in w.iteration))
    text = ", ".join(parts)
    if w.element is not None:
        text += f" → element {w.element:,}"
    if w.value is not None:
        text += f" (value {w.value:,})"
    return text


def _launch_hover(launches: list[tuple[str, LaunchResult]]) -> str:
    out = ["**tilelens** · declared launch", ""]
    for label, launch in launches:
        codes = sorted({d.code for d in launch.diagnostics})
        out.append(
            f"- {_launch_line(label, launch)}: {launch.status}, {len(launch.accesses)} access(es), "
            f"{', '.join(codes) or 'clean'}"
        )
    refusals = {d.message for _, launch in launches for d in launch.diagnostics if d.code == "TL030"}
    for message in sorted(refusals)[:4]:  # what was refused, and what would decide it
        # our own text, whose code spans are balanced: shown as written (escaping them printed `\``)
        out += ["", message]
    return "\n".join(out)


# ---------------------------------------------------------------- footprint maps


class _Intervals:
    """Sorted disjoint half-open intervals with O(log n) 'how many elements below x'."""

    def __init__(self, intervals) -> None:
        self.starts = [a for a, _ in intervals]
        self.ends = [b for _, b in intervals]
        self.before = [0]
        for a, b in intervals:
            self.before.append(self.before[-1] + (b - a))

    def covered_below(self, x: int) -> int:
        i = bisect.bisect_right(self.starts, x) - 1
        if i < 0:
            return 0
        return self.before[i] + min(x, self.ends[i]) - self.starts[i]

    def count(self, lo: int, hi: int) -> int:
        return self.covered_below(hi) - self.covered_below(lo) if hi > lo else 0

    def clipped(self, lo: float, hi: float) -> list[tuple[int, int]]:
        out = []
        for a, b in zip(self.starts, self.ends):
            a2, b2 = max(a, lo), min(b, hi)
            if a2 < b2:
                out.append((int(a2), int(b2)))
        return out


@dataclass
class _Grid:
    """Touched counts per cell of an outer×inner view, plus cells outside the storage."""

    outer: int
    inner: int
    outer_cells: int
    inner_cells: int

    def __post_init__(self) -> None:
        self.ob = -(-self.outer // self.outer_cells)  # rows per cell
        self.ib = -(-self.inner // self.inner_cells)  # cols per cell
        self.outer_cells = -(-self.outer // self.ob)
        self.inner_cells = -(-self.inner // self.ib)
        self.touched = [[0] * self.inner_cells for _ in range(self.outer_cells)]
        self.capacity = [[0] * self.inner_cells for _ in range(self.outer_cells)]
        self.out: set[tuple[int, int]] = set()  # (row cell in -1..outer_cells, col cell in 0..inner_cells)
        self.view_out: set[tuple[int, int]] = set()  # ... touched there inside the storage, outside the view
        self.sampled = False

    def col_cell(self, c: int) -> int:
        return self.inner_cells if c >= self.inner else c // self.ib

    def row_cell(self, r: int) -> int:
        return -1 if r < 0 else self.outer_cells if r >= self.outer else r // self.ob


def _fill(grid: _Grid, iv: _Intervals, outer_stride: int) -> None:
    rows: Sequence[int] = range(grid.outer)
    if grid.outer > _ROW_SAMPLE:
        grid.sampled = True
        step = grid.outer / _ROW_SAMPLE
        rows = sorted({int(i * step) for i in range(_ROW_SAMPLE)})
    for r in rows:
        base = r * outer_stride
        whole = iv.count(base, base + grid.inner)
        rc = r // grid.ob
        for j in range(grid.inner_cells):
            lo, hi = j * grid.ib, min(grid.inner, (j + 1) * grid.ib)
            grid.capacity[rc][j] += hi - lo
            if whole == grid.inner:
                grid.touched[rc][j] += hi - lo
            elif whole:
                grid.touched[rc][j] += iv.count(base + lo, base + hi)


def _mark_outside(grid: _Grid, pieces: list[tuple[int, int]], outer_stride: int) -> None:
    budget = 4 * _ROW_SAMPLE
    for a, b in pieces:
        r0, r1 = a // outer_stride, (b - 1) // outer_stride
        for r in range(r0, r1 + 1):
            if budget <= 0:
                return
            budget -= 1
            lo, hi = max(a, r * outer_stride) - r * outer_stride, min(b, (r + 1) * outer_stride) - r * outer_stride
            rc = grid.row_cell(r)
            for c in range(grid.col_cell(lo), grid.col_cell(hi - 1) + 1):
                grid.out.add((rc, c))


def _mark_view_outside(grid: _Grid, pieces: list[tuple[int, int]], outer_stride: int) -> None:
    """Cells of elements inside the storage but outside the view: the gap after each row's last
    column (a padded row read past its width), rows before or after the view."""
    budget = 4 * _ROW_SAMPLE
    for a, b in pieces:
        for r in range(a // outer_stride, (b - 1) // outer_stride + 1):
            if budget <= 0:
                return
            budget -= 1
            lo = max(a, r * outer_stride) - r * outer_stride
            hi = min(b, (r + 1) * outer_stride) - r * outer_stride
            rc = grid.row_cell(r)
            if r < 0 or r >= grid.outer:
                for c in range(grid.col_cell(lo), grid.col_cell(hi - 1) + 1):
                    grid.view_out.add((rc, c))
            elif hi > grid.inner:
                grid.view_out.add((rc, grid.inner_cells))


def _render(grid: _Grid) -> list[str]:
    marked = grid.out | grid.view_out
    extra_col = any(c == grid.inner_cells for _, c in marked)
    width = grid.inner_cells + (1 if extra_col else 0)

    def cell(r: int, c: int) -> str:
        if (r, c) in grid.out:
            return OUT
        if (r, c) in grid.view_out:
            return VIEW_OUT
        if r < 0 or r >= grid.outer_cells or c >= grid.inner_cells:
            return " "
        cap, got = grid.capacity[r][c], grid.touched[r][c]
        return FULL if cap and got >= cap else SOME if got else NONE

    rows = range(
        -1 if any(r == -1 for r, _ in marked) else 0,
        grid.outer_cells + (1 if any(r == grid.outer_cells for r, _ in marked) else 0),
    )
    return ["".join(cell(r, c) for c in range(width)).rstrip() or " " for r in rows]


def footprint_map(access: Access) -> list[str] | None:
    """Lines of a Unicode map of the view (≤16×32 cells), or None when the layout has no simple map."""
    shape, strides = access.view_shape, access.view_strides
    if not access.elements and access.touched == 0:
        return None
    iv = _Intervals(access.elements)
    lo_storage, hi_storage = -access.view_offset, access.storage or None
    below = iv.clipped(float("-inf"), lo_storage)
    above = iv.clipped(hi_storage, float("inf")) if hi_storage is not None else []
    outside = below + above
    inside = iv.clipped(lo_storage, hi_storage if hi_storage is not None else float("inf"))
    if len(shape) == 1 and len(strides) == 1 and strides[0] == 1 and shape[0] > 0:
        view_before = any(a < 0 for a, _ in inside)
        view_after = any(b > shape[0] for _, b in inside)
        return _bar(
            access, iv, OUT if below else VIEW_OUT if view_before else "", OUT if above else VIEW_OUT if view_after else ""
        )
    if len(shape) != 2 or len(strides) != 2 or 0 in shape:
        return None
    (rows, cols), (s0, s1) = shape, strides
    if s1 == 1 and s0 >= cols:  # row-major: element = r*s0 + c
        grid = _Grid(rows, cols, min(rows, MAX_ROWS), min(cols, MAX_COLS))
        _fill(grid, iv, s0)
        _mark_outside(grid, outside, s0)
        _mark_view_outside(grid, inside, s0)
        lines = _render(grid)
        cell = (grid.ob, grid.ib)
    elif s0 == 1 and s1 >= rows:  # column-major: element = c*s1 + r; fill the transpose
        grid = _Grid(cols, rows, min(cols, MAX_COLS), min(rows, MAX_ROWS))
        _fill(grid, iv, s1)
        _mark_outside(grid, outside, s1)
        _mark_view_outside(grid, inside, s1)
        lines = _transpose(_render(grid))
        cell = (grid.ib, grid.ob)
    else:
        return None
    note = f"{rows:,}×{cols:,} view, each cell {cell[0]:,}×{cell[1]:,} elements"
    if grid.sampled:
        note += ", rows sampled"
    return lines + [note]


def _transpose(lines: list[str]) -> list[str]:
    width = max((len(x) for x in lines), default=0)
    padded = [x.ljust(width) for x in lines]
    return ["".join(row[i] for row in padded).rstrip() or " " for i in range(width)]


def _bar(access: Access, iv: _Intervals, before: str, after: str) -> list[str]:
    n = access.view_shape[0]
    per = -(-n // min(n, BAR_CELLS))
    cells = -(-n // per)
    text = ""
    for j in range(cells):
        lo, hi = j * per, min(n, (j + 1) * per)
        got = iv.count(lo, hi)
        text += FULL if got >= hi - lo else SOME if got else NONE
    return [before + text + after, f"{n:,} elements, each cell {per:,}"]
