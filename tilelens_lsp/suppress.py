"""Suppression comments and code selection: `# tilelens: ignore[TL002]` and `check --select/--ignore`.

`# tilelens: ignore[TL002,TL004]` (or a bare `# tilelens: ignore`) at the end of a line silences those
codes on that line; alone on a line it silences the next line of code. A suppression that silences
nothing becomes a TL060 information diagnostic. Pure functions over `FileResult`s and source text:
nothing here knows LSP, the CLI or the worker.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, replace

from tilelens_lsp.model import SEVERITY, Diagnostic, FileResult
from tilelens_lsp.textlines import split_lines

UNUSED = "TL060"
_IGNORE = re.compile(r"#[ \t]*tilelens:[ \t]*ignore\b(?P<bracket>[ \t]*\[(?P<codes>[^\]]*)\])?(?P<rest>.*)$")
_CODE = re.compile(r"^TL\d{3}$")
# what every suppression's text holds: a file without it has none, and is not tokenized to find that out
_ANY_IGNORE = re.compile(r"#[ \t]*tilelens:[ \t]*ignore\b")
# Analyses that did not run to the end cannot tell a suppression is unused.
_INCOMPLETE = frozenset({"TL010", "TL040", "TL050"})


@dataclass(frozen=True)
class Suppression:
    line: int  # 1-based line of the comment
    column: int  # 1-based UTF-8 byte column of its `#`
    end_column: int  # 1-based byte column just past the directive
    targets: frozenset[int]  # 1-based lines it silences
    codes: tuple[str, ...] | None  # None: every code


def is_ignore(content: str) -> bool:
    """Whether the text after `# tilelens:` is a suppression rather than a launch directive."""
    return _match("# tilelens:" + content) is not None


def _match(comment: str) -> re.Match | None:
    m = _IGNORE.match(comment)
    if m is None:
        return None
    rest = m.group("rest").strip()
    # `ignore = 3` is a binding; a reason may follow as a further comment: `ignore[TL002]  # why`.
    return m if rest == "" or rest.startswith("#") else None


def find(text: str) -> list[Suppression]:
    """Every suppression comment of `text`, with the lines it silences."""
    if _ANY_IGNORE.search(text) is None:
        return []
    lines = split_lines(text)
    comments, logical = _comments(text, lines)
    out = []
    for line, col, comment in comments:
        # At the comment's start, or after a directive on a comment line: `# tilelens: k[...](...)  # tilelens: ignore`
        starts = [0] + [i for i in range(1, len(comment)) if comment[i] == "#" and comment[i - 1] in " \t"]
        found = next(((i, m) for i in starts if (m := _match(comment[i:])) is not None), None)
        if found is None:
            continue
        skip, m = found
        col += skip
        comment = comment[skip:]
        codes = None
        if m.group("bracket") is not None:
            codes = tuple(c.strip().upper() for c in m.group("codes").split(",") if c.strip())
        own_line = not lines[line - 1][:col].strip()  # nothing before it on its line
        targets = _targets_below(line, lines, logical) if own_line else logical.get(line, frozenset({line}))
        prefix = len(lines[line - 1][:col].encode("utf-8"))
        end = prefix + len(comment[: m.start("rest")].rstrip().encode("utf-8"))
        out.append(Suppression(line, prefix + 1, end + 1, targets, codes))
    return out


def _comments(text: str, lines: list[str]) -> tuple[list[tuple[int, int, str]], dict[int, frozenset[int]]]:
    """(line, character column, text) of each comment, and each line's logical line (all its lines)."""
    found: list[tuple[int, int, str]] = []
    logical: dict[int, frozenset[int]] = {}
    start = None
    last = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            last = tok.end[0]
            if tok.type == tokenize.COMMENT:
                found.append((tok.start[0], tok.start[1], tok.string))
            elif tok.type == tokenize.NEWLINE:
                if start is not None:
                    span = frozenset(range(start, tok.start[0] + 1))
                    for n in span:
                        logical[n] = span
                start = None
            elif (
                tok.type not in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER)
                and start is None
            ):
                start = tok.start[0]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # A file that does not tokenize (being edited): past the failure, trust a plain search.
        for number, line in enumerate(lines[last:], last + 1):
            i = line.find("#")
            if i >= 0 and "tilelens:" in line[i:]:
                found.append((number, i, line[i:]))
    return found, logical


def _targets_below(line: int, lines: list[str], logical: dict[int, frozenset[int]]) -> frozenset[int]:
    """The next logical line of code below `line`; through decorators to their `def`."""
    n = line + 1
    while n <= len(lines) and (not lines[n - 1].strip() or lines[n - 1].lstrip().startswith("#")):
        n += 1
    if n > len(lines):
        return frozenset()
    targets = set(logical.get(n, frozenset({n})))
    while lines[max(targets) - 1].lstrip().startswith("@"):
        nxt = max(targets) + 1
        if nxt > len(lines):
            break
        targets |= logical.get(nxt, frozenset({nxt}))
    return frozenset(targets)


# ---------------------------------------------------------------- applying them


def _lines_here(diag: Diagnostic, rel: str) -> set[int]:
    """The lines of the file `rel` a diagnostic lands on (its frames here; a directive's whole span)."""
    if diag.stack:
        lines = {f.line for f in diag.stack if f.path == rel or not f.path}
    else:
        lines = {diag.line}
    if diag.end_line and diag.end_line > diag.line and diag.line in lines:
        lines.update(range(diag.line, diag.end_line + 1))
    return lines


def apply(result: FileResult, text: str, rel: str | None = None) -> FileResult:
    """`result` without the diagnostics the file's suppressions silence, plus TL060 for unused ones."""
    sups = find(text)
    if not sups:
        return result
    rel = result.path if rel is None else rel
    used: list[set[str]] = [set() for _ in sups]

    def keep(diag: Diagnostic) -> bool:
        silenced = False
        lines = _lines_here(diag, rel)
        for i, s in enumerate(sups):
            if lines & s.targets and (s.codes is None or diag.code in s.codes):
                used[i].add(diag.code)
                silenced = True
        return not silenced

    launches = tuple(
        replace(launch, diagnostics=tuple(d for d in launch.diagnostics if keep(d))) for launch in result.launches
    )
    file_level = [d for d in result.diagnostics if keep(d)]
    everything = list(result.diagnostics) + [d for launch in result.launches for d in launch.diagnostics]
    complete = all(launch.status == "analyzed" for launch in result.launches) and not any(
        d.code in _INCOMPLETE for d in everything
    )
    if complete:
        file_level.extend(_unused(sups, used))
    return replace(result, launches=launches, diagnostics=tuple(file_level))


def _unused(sups: list[Suppression], used: list[set[str]]) -> list[Diagnostic]:
    out = []
    for s, hit in zip(sups, used):
        where = f"line {min(s.targets)}" if s.targets else "the end of the file"
        if s.codes is None:
            message = None if hit else f"unused suppression: nothing to silence on {where}"
        else:
            unknown = [c for c in s.codes if c not in SEVERITY or not _CODE.match(c)]
            idle = [c for c in s.codes if c not in hit and c not in unknown]
            parts = []
            if unknown:
                parts.append(
                    f"unknown code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                    f"(tilelens codes: {', '.join(sorted(SEVERITY))})"
                )
            if idle:
                parts.append(f"no {', '.join(idle)} on {where}")
            message = "unused suppression: " + "; ".join(parts) if parts else None
        if message:
            out.append(Diagnostic(UNUSED, message, s.line, s.column, end_line=s.line, end_column=s.end_column))
    return out


# ---------------------------------------------------------------- --select / --ignore


def parse_codes(values: list[str] | None) -> tuple[str, ...] | None:
    """`["TL001,TL002", "TL0"]` → prefixes; `ALL` selects every code. Raises ValueError on a selector
    that matches no code (a typo must not silently select nothing)."""
    if values is None:
        return None
    out = []
    for value in values:
        for part in value.split(","):
            part = part.strip().upper()
            if not part:
                continue
            if part == "ALL":
                part = ""
            elif not any(code.startswith(part) for code in SEVERITY):
                raise ValueError(f"unknown code or prefix {part!r} (tilelens codes: {', '.join(sorted(SEVERITY))})")
            out.append(part)
    return tuple(out)


def selected(code: str, select: tuple[str, ...] | None, ignore: tuple[str, ...] | None) -> bool:
    """As ruff: the most specific matching selector wins; on a tie, `ignore` wins."""

    def best(prefixes: tuple[str, ...] | None) -> int:
        return max((len(p) for p in prefixes or () if code.startswith(p)), default=-1)

    chosen = best(select) if select is not None else 0
    return chosen >= 0 and chosen > best(ignore)


def select_codes(result: FileResult, select: tuple[str, ...] | None, ignore: tuple[str, ...] | None) -> FileResult:
    if select is None and not ignore:
        return result

    def ok(d: Diagnostic) -> bool:
        return selected(d.code, select, ignore)

    return replace(
        result,
        diagnostics=tuple(d for d in result.diagnostics if ok(d)),
        launches=tuple(
            replace(launch, diagnostics=tuple(d for d in launch.diagnostics if ok(d))) for launch in result.launches
        ),
    )
